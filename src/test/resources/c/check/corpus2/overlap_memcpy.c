/* memcpy with overlapping ranges (undefined; memmove is meant): a buffer's tail moved down by 4 bytes.
 * ASan reports memcpy-param-overlap, memcheck "Source and destination overlap". Twin: memmove. */
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

static void drop_prefix(int bad)
{
    char *buf = malloc(64);
    for (int i = 0; i < 64; i++) buf[i] = (char)('a' + i % 26);
    size_t n = opaque(40);
    if (bad) memcpy(buf, buf + 4, n); /* BAD */
    else memmove(buf, buf + 4, n);
    print_bytes(buf, 64);
    free(buf);
}

void overlap_memcpy_bad(void) { drop_prefix((int)opaque(1)); }
void overlap_memcpy_good(void) { drop_prefix((int)opaque(0)); }
