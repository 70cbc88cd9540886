// CWE-401: a class that allocates in its constructor and has no destructor. Twin: one that frees.
#include "corpus.h"

namespace cxx_leak_member {
struct holder {
    long *values;
    explicit holder(size_t n);
};

holder::holder(size_t n) : values(new long[n]) { for (size_t i = 0; i < n; i++) values[i] = i; }

static void run(bool bad)
{
    holder *h = new holder(8);
    print_int(h->values[7]);
    if (!bad) delete[] h->values;
    delete h;
}

void bad() { run(opaque(1) != 0); }
void good() { run(opaque(0) != 0); }
}
