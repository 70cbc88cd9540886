/* CWE-122: memcpy of a 100-char source into a 50-char heap buffer (the size of the source, not the dest). */
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

void heap_memcpy_overflow_bad(void)
{
    char *data = malloc(50);
    char source[100];
    memset(source, 'C', 99);
    source[99] = '\0';
    memcpy(data, source, 100 * sizeof(char)); /* BAD */
    print_bytes(data, 50);
    free(data);
}

void heap_memcpy_overflow_good(void)
{
    char *data = malloc(100);
    char source[100];
    memset(source, 'C', 99);
    source[99] = '\0';
    memcpy(data, source, 100 * sizeof(char));
    print_line(data);
    free(data);
}
