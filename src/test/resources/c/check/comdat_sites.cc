/* comdat_sites.cc: `comdat_sites WHICH N`, an overflow in a function of a comdat group (comdat_sites.h):
 * 0 the template, 1 the in-class method, 2 the lambda, 3 a use after free of a block allocated and freed there. */
#include <cstdio>
#include "comdat_sites.h"

void twice(int n);

int main(int argc, char **argv) {
    int which = atoi(argv[1]), n = atoi(argv[2]);
    int *a = new int[4]; /* new */
    ns::log *l = new ns::log; /* newlog */
    twice(0);
    if (which == 0) put(a, n);
    if (which == 1) l->add(n);
    if (which == 2) poke(a, n);
    int *q = make<int>(2);
    drop(q);
    printf("%d %c %d\n", a[1], which == 1 ? l->line[0] : '-', which == 3 ? q[0] : 0); /* use */
    delete l;
    delete[] a;
    return 0;
}
