/* CWE-415: a helper frees its argument, the caller frees its copy of the pointer as well. */
#include <stdlib.h>
#include "corpus.h"

static void sink_free(long *p, int owns)
{
    print_bytes(p, sizeof *p);
    if (owns) free(p);
}

static void run(int callee_frees)
{
    long *data = malloc(10 * sizeof *data);
    long *alias = data;
    data[0] = 42;
    sink_free(data, callee_frees);
    free(alias); /* BAD */
}

void double_free_alias_bad(void) { run((int)opaque(1)); }
void double_free_alias_good(void) { run((int)opaque(0)); }
