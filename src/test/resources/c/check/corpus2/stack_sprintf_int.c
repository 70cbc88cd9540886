/* CWE-121: a number formatted into a stack buffer sized for small numbers; "-2147483648" and its NUL are 12
 * bytes in an 8-byte array. Twin: a 16-byte array. */
#include <stdio.h>
#include "corpus.h"

static void show_small(int v)
{
    char text[8];
    sprintf(text, "%d", v); /* BAD */
    print_line(text);
}

static void show_big(int v)
{
    char text[16];
    sprintf(text, "%d", v);
    print_line(text);
}

void stack_sprintf_int_bad(void) { show_small((int)opaque((size_t)-2147483648L)); }
void stack_sprintf_int_good(void) { show_big((int)opaque((size_t)-2147483648L)); }
