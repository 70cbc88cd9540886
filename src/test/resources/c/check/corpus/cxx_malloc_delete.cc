// CWE-762: a C buffer (malloc) released with delete[]. Twin: free.
#include <cstdlib>
#include <cstring>
#include "corpus.h"

namespace cxx_malloc_delete {
void bad()
{
    char *data = static_cast<char *>(malloc(100));
    strcpy(data, "from malloc");
    print_line(data);
    delete[] data; /* BAD */
}

void good()
{
    char *data = static_cast<char *>(malloc(100));
    strcpy(data, "from malloc");
    print_line(data);
    free(data);
}
}
