/* CWE-122 (CWE-193 off-by-one): a copy of a string into malloc(strlen(s)), no room for the NUL; strcpy writes it
 * one byte past the block. Twin: strlen(s) + 1. */
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

static char *dup_name(const char *s, size_t extra)
{
    char *d = malloc(strlen(s) + extra);
    strcpy(d, s); /* BAD */
    return d;
}

static void run(size_t extra)
{
    char *d = dup_name("configuration", extra);
    print_line(d);
    free(d);
}

void heap_strcpy_len_bad(void) { run(opaque(0)); }
void heap_strcpy_len_good(void) { run(opaque(1)); }
