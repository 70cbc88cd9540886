// CWE-122: a std::vector of ten ints indexed at ten (operator[] does not check). Twin: at nine.
#include <vector>
#include "corpus.h"

namespace cxx_vector_index {
static void run(size_t at)
{
    std::vector<int> v(10, 1);
    v[at] = 2; /* BAD */
    print_bytes(v.data(), v.size() * sizeof(int));
}

void bad() { run(opaque(10)); }
void good() { run(opaque(9)); }
}
