// CWE-122: a loop writes one element past an array from new[] (<= the count). Twin: <.
#include "corpus.h"

namespace cxx_new_array_overflow {
static void fill(size_t n, size_t last)
{
    short *data = new short[n];
    for (size_t i = 0; i <= last; i++) data[i] = static_cast<short>(i); /* BAD */
    print_bytes(data, n * sizeof *data);
    delete[] data;
}

void bad() { fill(opaque(20), opaque(20)); }
void good() { fill(opaque(20), opaque(19)); }
}
