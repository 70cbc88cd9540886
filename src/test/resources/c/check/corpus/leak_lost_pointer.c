/* CWE-401: a block whose only pointer is overwritten by the next allocation. Twin: freed first. */
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

static void run(int bad)
{
    char *data = malloc(100);
    strcpy(data, "first");
    print_line(data);
    if (!bad) free(data);
    data = malloc(100);
    strcpy(data, "second");
    print_line(data);
    free(data);
}

void leak_lost_pointer_bad(void) { run((int)opaque(1)); }
void leak_lost_pointer_good(void) { run((int)opaque(0)); }
