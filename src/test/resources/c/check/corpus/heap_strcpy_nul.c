/* CWE-122 (CWE-193): malloc(strlen(src)) leaves no room for the terminator strcpy writes. Twin: + 1. */
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

#define SRC_STRING "0123456789"

void heap_strcpy_nul_bad(void)
{
    char *data = malloc(strlen(SRC_STRING));
    strcpy(data, (char *)opaque_ptr(SRC_STRING)); /* BAD */
    print_line(data);
    free(data);
}

void heap_strcpy_nul_good(void)
{
    char *data = malloc(strlen(SRC_STRING) + 1);
    strcpy(data, (char *)opaque_ptr(SRC_STRING));
    print_line(data);
    free(data);
}
