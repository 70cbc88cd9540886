/* CWE-476 (CWE-690): malloc's result written to before it is checked; the block is too large to get. */
#include <stdlib.h>
#include "corpus.h"

static void run(size_t n)
{
    int *data = malloc(n);
    data[0] = 5; /* BAD */
    if (data == NULL) { print_line("no memory"); return; }
    print_bytes(data, sizeof *data);
    free(data);
}

void null_check_after_bad(void) { run(opaque((size_t)1 << 62)); }
void null_check_after_good(void) { run(opaque(64)); }
