/* CWE-122: a loop writes one int past a malloc'd array of ten (i <= 10). Twin: i < 10. */
#include <stdlib.h>
#include "corpus.h"

void heap_loop_overflow_bad(void)
{
    int *data = malloc(10 * sizeof *data);
    for (size_t i = 0; i <= opaque(10); i++) data[i] = (int)i; /* BAD */
    print_bytes(data, 10 * sizeof *data);
    free(data);
}

void heap_loop_overflow_good(void)
{
    int *data = malloc(10 * sizeof *data);
    for (size_t i = 0; i < opaque(10); i++) data[i] = (int)i;
    print_bytes(data, 10 * sizeof *data);
    free(data);
}
