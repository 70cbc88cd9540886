// CWE-416: a reference to a vector's element kept across push_back, which reallocated the storage; the write
// goes to the freed array. Twin: the reference is taken after the push_back.
#include <vector>
#include "corpus.h"

namespace cxx_uaf_vector_ref {
static void run(bool bad)
{
    std::vector<int> v;
    v.reserve(4);
    for (int i = 0; i < 4; i++) v.push_back(i);
    int *first = &v[0];
    v.push_back(4);
    if (!bad) first = &v[0];
    *first = 10; /* BAD */
    print_bytes(v.data(), v.size() * sizeof(int));
}

void bad() { run(opaque(1) != 0); }
void good() { run(opaque(0) != 0); }
}
