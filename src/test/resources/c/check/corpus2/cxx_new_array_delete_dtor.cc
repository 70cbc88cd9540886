// CWE-762: an array of objects with a destructor (new[] keeps a count before them) released with delete, not
// delete[]. Twin: delete[].
#include "corpus.h"

namespace cxx_new_array_delete_dtor {
struct item {
    long v = 1;
    ~item() { print_int(v); }
};

static void run(bool bad)
{
    item *items = static_cast<item *>(opaque_ptr(new item[3]));
    if (bad) delete items; /* BAD */
    else delete[] items;
}

void bad() { run(opaque(1) != 0); }
void good() { run(opaque(0) != 0); }
}
