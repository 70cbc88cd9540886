/* CWE-122: strcat of 99 chars onto an empty 50-byte heap string. Twin: a 100-byte one. */
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

static void append(size_t size)
{
    char *data = malloc(size);
    data[0] = '\0';
    char source[100];
    memset(source, 'C', 99);
    source[99] = '\0';
    strcat(data, source); /* BAD */
    print_line(data);
    free(data);
}

void heap_strcat_overflow_bad(void) { append(opaque(50)); }
void heap_strcat_overflow_good(void) { append(opaque(100)); }
