// CWE-416: a member function called on an object after it was deleted. Twin: before.
#include "corpus.h"

namespace cxx_use_after_delete {
class counter {
public:
    long value = 0;
    void add(long v);
};

// out of line (not inline): the call stays, and its access is checked in it
__attribute__((noinline)) void counter::add(long v) { value += v; } /* BAD */

void bad()
{
    counter *c = new counter;
    c->add(2);
    delete c;
    c->add(3);
    print_int(static_cast<long>(opaque(1)));
}

void good()
{
    counter *c = new counter;
    c->add(2);
    c->add(3);
    print_int(c->value);
    delete c;
}
}
