/* comdat_sites2.cc: the same comdat functions instantiated a second time (comdat_sites.h), linked first. */
#include "comdat_sites.h"

void twice(int n) {
    int *b = new int[8];
    put(b, n);
    ns::log l;
    l.add(n > 6 ? 6 : n);
    poke(b, n);
    drop(make<int>(1));
    delete[] b;
}
