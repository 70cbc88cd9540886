// CWE-762: an array from new[] released with delete. Twin: delete[].
#include "corpus.h"

namespace cxx_new_array_delete {
void bad()
{
    long *data = new long[10];
    for (int i = 0; i < 10; i++) data[i] = i;
    print_bytes(data, 10 * sizeof *data);
    delete data; /* BAD */
}

void good()
{
    long *data = new long[10];
    for (int i = 0; i < 10; i++) data[i] = i;
    print_bytes(data, 10 * sizeof *data);
    delete[] data;
}
}
