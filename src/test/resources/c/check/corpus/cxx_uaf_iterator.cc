// CWE-416: a pointer into a std::vector kept across a push_back that reallocates. Twin: re-taken.
#include <vector>
#include "corpus.h"

namespace cxx_uaf_iterator {
static void run(bool bad)
{
    std::vector<long> v(4, 7);
    long *first = &v[0];
    for (int i = 0; i < 100; i++) v.push_back(i);
    if (!bad) first = &v[0];
    print_int(*first); /* BAD */
}

void bad() { run(opaque(1) != 0); }
void good() { run(opaque(0) != 0); }
}
