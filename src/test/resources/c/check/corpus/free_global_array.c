/* CWE-590: free of a static array. Twin: a malloc'd one. */
#include <stdlib.h>
#include "corpus.h"

static long slots[16];

static void run(int bad)
{
    long *data = bad ? slots : malloc(sizeof slots);
    for (int i = 0; i < 16; i++) data[i] = i;
    print_bytes(data, sizeof slots);
    free(data); /* BAD */
}

void free_global_array_bad(void) { run((int)opaque(1)); }
void free_global_array_good(void) { run((int)opaque(0)); }
