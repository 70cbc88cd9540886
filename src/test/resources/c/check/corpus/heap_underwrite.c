/* CWE-124: the pointer is moved 8 chars before a malloc'd buffer, then written through. Twin: not moved. */
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

static void write_at(ptrdiff_t shift)
{
    char *buffer = malloc(100);
    memset(buffer, 'A', 99);
    buffer[99] = '\0';
    char *data = buffer + shift;
    data[0] = 'B'; /* BAD */
    print_line(buffer);
    free(buffer);
}

void heap_underwrite_bad(void) { write_at(-(ptrdiff_t)opaque(8)); }
void heap_underwrite_good(void) { write_at((ptrdiff_t)opaque(0)); }
