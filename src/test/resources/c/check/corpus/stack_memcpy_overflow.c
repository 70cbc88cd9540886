/* CWE-121: memcpy of 100 chars into a 50-char stack buffer. Twin: a 100-char one. */
#include <string.h>
#include "corpus.h"

void stack_memcpy_overflow_bad(void)
{
    char dataBuffer[50];
    char *data = opaque_ptr(dataBuffer);
    char source[100];
    memset(source, 'C', 99);
    source[99] = '\0';
    memcpy(data, source, 100 * sizeof(char)); /* BAD */
    print_bytes(dataBuffer, 50);
}

void stack_memcpy_overflow_good(void)
{
    char dataBuffer[100];
    char *data = opaque_ptr(dataBuffer);
    char source[100];
    memset(source, 'C', 99);
    source[99] = '\0';
    memcpy(data, source, 100 * sizeof(char));
    print_line(data);
}
