// CWE-416 (iterator invalidation): an iterator taken before an insert that reallocated the vector, then used to
// read it: the loop reads the freed array. Twin: the iterator is taken again.
#include <vector>
#include "corpus.h"

namespace cxx_uaf_vector_iter {
static void run(bool bad)
{
    std::vector<long> v(4, 7);
    v.shrink_to_fit();
    auto it = v.begin();
    v.insert(v.end(), 3, 9);
    if (!bad) it = v.begin();
    long sum = 0;
    for (int i = 0; i < 4; i++, ++it) sum += *it; /* BAD */
    print_int(sum);
}

void bad() { run(opaque(1) != 0); }
void good() { run(opaque(0) != 0); }
}
