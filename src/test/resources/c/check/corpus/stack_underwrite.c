/* CWE-124: a pointer 8 chars before a stack buffer, then written through. Twin: the buffer itself. */
#include <string.h>
#include "corpus.h"

static void write_at(ptrdiff_t shift)
{
    char dataBuffer[100];
    memset(dataBuffer, 'A', 99);
    dataBuffer[99] = '\0';
    char *data = dataBuffer + shift;
    char source[100];
    memset(source, 'C', 99);
    source[99] = '\0';
    strcpy(data, source); /* BAD */
    print_line(dataBuffer);
}

void stack_underwrite_bad(void) { write_at(-(ptrdiff_t)opaque(8)); }
void stack_underwrite_good(void) { write_at((ptrdiff_t)opaque(0)); }
