// CWE-590: delete of an object on the stack (a factory that sometimes returns a local's address). Twin: new.
#include "corpus.h"

namespace cxx_delete_stack {
struct widget { long id; long size; };

static void run(bool bad)
{
    widget local{1, 2};
    widget *w = bad ? &local : new widget{1, 2};
    w = static_cast<widget *>(opaque_ptr(w));
    print_int(w->id + w->size);
    delete w; /* BAD */
}

void bad() { run(opaque(1) != 0); }
void good() { run(opaque(0) != 0); }
}
