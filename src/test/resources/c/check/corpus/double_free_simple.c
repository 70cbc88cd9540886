/* CWE-415: the same block freed twice in one function. Twin: freed once. */
#include <stdlib.h>
#include "corpus.h"

void double_free_simple_bad(void)
{
    char *data = malloc(100);
    data[0] = 'A';
    print_bytes(data, 1);
    free(data);
    free(data); /* BAD */
}

void double_free_simple_good(void)
{
    char *data = malloc(100);
    data[0] = 'A';
    print_bytes(data, 1);
    free(data);
}
