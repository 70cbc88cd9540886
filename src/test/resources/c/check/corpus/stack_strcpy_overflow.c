/* CWE-121 (CWE-193): strcpy of a 10-char string into char[10]: no room for the terminator. */
#include <string.h>
#include "corpus.h"

void stack_strcpy_overflow_bad(void)
{
    char dest[10];
    strcpy(dest, (char *)opaque_ptr("0123456789")); /* BAD */
    print_line(dest);
}

void stack_strcpy_overflow_good(void)
{
    char dest[11];
    strcpy(dest, (char *)opaque_ptr("0123456789"));
    print_line(dest);
}
