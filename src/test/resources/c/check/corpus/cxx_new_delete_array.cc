// CWE-762: a single object from new released with delete[]. Twin: delete.
#include "corpus.h"

namespace cxx_new_delete_array {
void bad()
{
    int *data = new int(5);
    print_int(*data);
    delete[] data; /* BAD */
}

void good()
{
    int *data = new int(5);
    print_int(*data);
    delete data;
}
}
