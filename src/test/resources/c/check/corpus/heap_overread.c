/* CWE-126: memcpy copies the destination's size (100) out of a 50-char heap string. Twin: strlen + 1. */
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

void heap_overread_bad(void)
{
    char *data = malloc(50);
    memset(data, 'A', 49);
    data[49] = '\0';
    char dest[100];
    memset(dest, 'C', 99);
    dest[99] = '\0';
    memcpy(dest, data, strlen(dest) * sizeof(char)); /* BAD */
    dest[99] = '\0';
    print_line(dest);
    free(data);
}

void heap_overread_good(void)
{
    char *data = malloc(50);
    memset(data, 'A', 49);
    data[49] = '\0';
    char dest[100];
    memset(dest, 'C', 99);
    dest[99] = '\0';
    memcpy(dest, data, strlen(data) * sizeof(char));
    dest[99] = '\0';
    print_line(dest);
    free(data);
}
