/* CWE-122 (CWE-193): a length-prefixed field copied with its terminator, len + 1 bytes into a block of len. */
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

static void field(const char *src, size_t len, size_t room)
{
    char *out = malloc(len + room);
    memcpy(out, src, len + 1); /* BAD */
    print_bytes(out, len);
    free(out);
}

void heap_memcpy_nul_bad(void) { field("header-value", opaque(12), opaque(0)); }
void heap_memcpy_nul_good(void) { field("header-value", opaque(12), opaque(1)); }
