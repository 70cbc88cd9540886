/* CWE-126: memcpy copies the destination's size out of a shorter stack source. Twin: the source's size. */
#include <string.h>
#include "corpus.h"

static void copy(size_t n)
{
    char source[50];
    memset(source, 'A', 49);
    source[49] = '\0';
    char dest[100];
    memset(dest, 'C', 99);
    dest[99] = '\0';
    memcpy(dest, source, n); /* BAD */
    dest[99] = '\0';
    print_line(dest);
}

void stack_overread_bad(void) { copy(opaque(99)); }
void stack_overread_good(void) { copy(opaque(49)); }
