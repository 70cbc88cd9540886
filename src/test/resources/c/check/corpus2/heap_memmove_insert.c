/* CWE-122: a character inserted at the front of a full heap buffer: memmove shifts all n bytes up by one, the
 * last lands one past the block. Twin: the buffer has room for one more. */
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

static void insert(size_t n, size_t room)
{
    char *buf = malloc(n + room);
    memset(buf, 'a', n);
    memmove(buf + 1, buf, n); /* BAD */
    buf[0] = '>';
    print_bytes(buf, n);
    free(buf);
}

void heap_memmove_insert_bad(void) { insert(opaque(24), opaque(0)); }
void heap_memmove_insert_good(void) { insert(opaque(24), opaque(1)); }
