// CWE-416: a virtual call through an object pointer after the object was deleted (its vptr is read from the
// freed block). Twin: the call comes first.
#include "corpus.h"

namespace cxx_use_after_delete_virtual {
struct shape {
    virtual ~shape() {}
    virtual long area() const = 0;
};
struct square : shape {
    long side = 3;
    long area() const override { return side * side; }
};

static void run(bool bad)
{
    shape *s = static_cast<shape *>(opaque_ptr(new square));
    long a = 0;
    if (!bad) a = s->area();
    delete s;
    if (bad) a = s->area(); /* BAD */
    print_int(a);
}

void bad() { run(opaque(1) != 0); }
void good() { run(opaque(0) != 0); }
}
