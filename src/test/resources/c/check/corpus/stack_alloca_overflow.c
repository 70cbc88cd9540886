/* CWE-121: memcpy of 100 chars into a 50-char alloca buffer. Twin: alloca of 100. */
#include <alloca.h>
#include <string.h>
#include "corpus.h"

static void copy(size_t size)
{
    char *data = alloca(size);
    char source[100];
    memset(source, 'C', 99);
    source[99] = '\0';
    memcpy(data, source, 100); /* BAD */
    print_line(data);
}

void stack_alloca_overflow_bad(void) { copy(opaque(50)); }
void stack_alloca_overflow_good(void) { copy(opaque(100)); }
