/* CWE-122: sprintf("%s-%d") of a long name into a 16-byte heap buffer. Twin: snprintf with its size. */
#include <stdio.h>
#include <stdlib.h>
#include "corpus.h"

void heap_sprintf_overflow_bad(void)
{
    char *data = malloc(16);
    const char *name = opaque_ptr("a-rather-long-name");
    sprintf(data, "%s-%d", name, 42); /* BAD */
    print_line(data);
    free(data);
}

void heap_sprintf_overflow_good(void)
{
    char *data = malloc(16);
    const char *name = opaque_ptr("a-rather-long-name");
    snprintf(data, 16, "%s-%d", name, 42);
    print_line(data);
    free(data);
}
