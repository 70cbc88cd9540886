/* CWE-121: sprintf of two numbers and a word into char[8] on the stack. Twin: char[64]. */
#include <stdio.h>
#include "corpus.h"

void stack_sprintf_overflow_bad(void)
{
    char line[8];
    sprintf(line, "%d:%d %s", (int)opaque(1234), (int)opaque(5678), (char *)opaque_ptr("word")); /* BAD */
    print_line(line);
}

void stack_sprintf_overflow_good(void)
{
    char line[64];
    sprintf(line, "%d:%d %s", (int)opaque(1234), (int)opaque(5678), (char *)opaque_ptr("word"));
    print_line(line);
}
