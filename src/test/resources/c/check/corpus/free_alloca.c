/* CWE-590: free of alloca'd memory. Twin: malloc'd. */
#include <alloca.h>
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

static void run(int bad)
{
    char *data = bad ? alloca(64) : malloc(64);
    memset(data, 'B', 63);
    data[63] = '\0';
    print_line(data);
    free(data); /* BAD */
}

void free_alloca_bad(void) { run((int)opaque(1)); }
void free_alloca_good(void) { run((int)opaque(0)); }
