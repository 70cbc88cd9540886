/* CWE-122 (wide): wcsncpy of 99 wide chars into a heap buffer of 50. Twin: 49 and a terminator. */
#include <stdlib.h>
#include <wchar.h>
#include "corpus.h"

static void copy(size_t n)
{
    wchar_t *data = malloc(50 * sizeof(wchar_t));
    wchar_t source[100];
    wmemset(source, L'C', 99);
    source[99] = L'\0';
    wcsncpy(data, source, n); /* BAD */
    data[49] = L'\0';
    print_wline(data);
    free(data);
}

void heap_wcsncpy_overflow_bad(void) { copy(opaque(99)); }
void heap_wcsncpy_overflow_good(void) { copy(opaque(49)); }
