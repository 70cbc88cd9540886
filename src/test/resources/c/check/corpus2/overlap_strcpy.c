/* strcpy with overlapping ranges: a string shifted left inside itself with strcpy (undefined). ASan reports
 * strcpy-param-overlap, memcheck "Source and destination overlap". Twin: memmove. */
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

static void unquote(int bad)
{
    char *s = malloc(32);
    strcpy(s, "\"quoted value\"");
    size_t n = strlen(s);
    s[n - 1] = '\0';
    if (bad) strcpy(s, s + 1); /* BAD */
    else memmove(s, s + 1, n - 1);
    print_line(s);
    free(s);
}

void overlap_strcpy_bad(void) { unquote((int)opaque(1)); }
void overlap_strcpy_good(void) { unquote((int)opaque(0)); }
