// CWE-122: a heap object's member array indexed one past its end at the object's end: the write is past the
// heap block. Twin: the last valid index.
#include "corpus.h"

namespace cxx_heap_member_index {
struct histogram {
    int total;
    int bins[10];
    void add(unsigned v) { bins[v]++; total++; } /* BAD */
};

static void run(unsigned v)
{
    histogram *h = new histogram();
    h->add(v);
    print_int(h->total);
    delete h;
}

void bad() { run(static_cast<unsigned>(opaque(10))); }
void good() { run(static_cast<unsigned>(opaque(9))); }
}
