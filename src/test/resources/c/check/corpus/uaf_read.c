/* CWE-416: a malloc'd array is freed, then printed. Twin: printed, then freed. */
#include <stdlib.h>
#include "corpus.h"

void uaf_read_bad(void)
{
    int *data = malloc(100 * sizeof *data);
    for (int i = 0; i < 100; i++) data[i] = 5;
    free(data);
    print_int(data[0]); /* BAD */
}

void uaf_read_good(void)
{
    int *data = malloc(100 * sizeof *data);
    for (int i = 0; i < 100; i++) data[i] = 5;
    print_int(data[0]);
    free(data);
}
