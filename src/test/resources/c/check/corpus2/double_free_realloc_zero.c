/* CWE-415: realloc(p, 0) frees p in glibc and returns NULL; the caller treats NULL as "realloc failed, p still
 * valid" and frees p again. Twin: the result of realloc is kept. */
#include <stdlib.h>
#include "corpus.h"

static void shrink(int keep)
{
    char *p = malloc(40);
    p[0] = 'x';
    char *q = realloc(p, opaque(0));
    if (keep) p = q;
    else if (q) p = q;
    free(p); /* BAD */
    print_line("shrunk");
}

void double_free_realloc_zero_bad(void) { shrink((int)opaque(0)); }
void double_free_realloc_zero_good(void) { shrink((int)opaque(1)); }
