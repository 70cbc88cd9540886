/* CWE-122: strncpy with the source's length bound into a smaller heap buffer. Twin: the destination's. */
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

void heap_strncpy_overflow_bad(void)
{
    char *data = malloc(50);
    char source[100];
    memset(source, 'C', 99);
    source[99] = '\0';
    strncpy(data, source, strlen(source) + 1); /* BAD */
    print_line(data);
    free(data);
}

void heap_strncpy_overflow_good(void)
{
    char *data = malloc(50);
    char source[100];
    memset(source, 'C', 99);
    source[99] = '\0';
    strncpy(data, source, 50 - 1);
    data[50 - 1] = '\0';
    print_line(data);
    free(data);
}
