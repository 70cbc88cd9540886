/* CWE-127: memcpy reads from 8 bytes before a malloc'd source. Twin: from its start. */
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

static void read_at(ptrdiff_t shift)
{
    char *buffer = malloc(100);
    memset(buffer, 'A', 99);
    buffer[99] = '\0';
    char *data = buffer + shift;
    char dest[100];
    memcpy(dest, data, 100); /* BAD */
    dest[99] = '\0';
    print_line(dest);
    free(buffer);
}

void heap_underread_bad(void) { read_at(-(ptrdiff_t)opaque(8)); }
void heap_underread_good(void) { read_at((ptrdiff_t)opaque(0)); }
