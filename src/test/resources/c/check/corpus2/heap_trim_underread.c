/* CWE-127: trailing blanks trimmed by walking back from the end with no stop at the start: a line of blanks
 * reads the byte before the heap block. Twin: the walk stops at the start. */
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

static void trim(const char *line, int bounded)
{
    size_t n = strlen(line);
    char *s = malloc(n + 1);
    memcpy(s, line, n + 1);
    char *e = s + n;
    if (bounded) {
        while (e > s && e[-1] == ' ') e--;
    } else {
        while (e[-1] == ' ') e--; /* BAD */
    }
    *e = '\0';
    print_int((long)(e - s));
    free(s);
}

void heap_trim_underread_bad(void) { trim("    ", (int)opaque(0)); }
void heap_trim_underread_good(void) { trim("    ", (int)opaque(1)); }
