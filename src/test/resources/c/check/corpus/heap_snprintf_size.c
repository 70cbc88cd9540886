/* CWE-122: snprintf told the source's size (100), not the 20-byte destination's. Twin: the destination's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

static void format(int bad)
{
    char *data = malloc(20);
    char source[100];
    memset(source, 'C', 99);
    source[99] = '\0';
    if (bad) snprintf(data, 100, "%s", source); /* BAD */
    else snprintf(data, 20, "%s", source);
    print_line(data);
    free(data);
}

void heap_snprintf_size_bad(void) { format(1); }
void heap_snprintf_size_good(void) { format(0); }
