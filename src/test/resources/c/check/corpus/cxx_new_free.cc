// CWE-762: an object from new released with free. Twin: delete.
#include <cstdlib>
#include "corpus.h"

namespace cxx_new_free {
struct point { long x, y; };

void bad()
{
    point *p = new point{3, 4};
    print_bytes(p, sizeof *p);
    free(p); /* BAD */
}

void good()
{
    point *p = new point{3, 4};
    print_bytes(p, sizeof *p);
    delete p;
}
}
