/* CWE-121: strncat bounded by the source's length onto a half-full stack buffer of 50. */
#include <string.h>
#include "corpus.h"

void stack_strncat_overflow_bad(void)
{
    char dest[50] = "0123456789012345678901234567890123456789";
    char source[100];
    memset(source, 'C', 99);
    source[99] = '\0';
    strncat(dest, source, strlen(source)); /* BAD */
    print_line(dest);
}

void stack_strncat_overflow_good(void)
{
    char dest[50] = "0123456789012345678901234567890123456789";
    char source[100];
    memset(source, 'C', 99);
    source[99] = '\0';
    strncat(dest, source, sizeof dest - strlen(dest) - 1);
    print_line(dest);
}
