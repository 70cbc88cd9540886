// CWE-590: delete[] of a static array. Twin: of a new[] one.
#include "corpus.h"

namespace cxx_delete_static {
static char names[64];

static void run(bool bad)
{
    char *data = bad ? names : new char[64];
    data = static_cast<char *>(opaque_ptr(data));
    for (int i = 0; i < 63; i++) data[i] = 'n';
    data[63] = '\0';
    print_line(data);
    delete[] data; /* BAD */
}

void bad() { run(opaque(1) != 0); }
void good() { run(opaque(0) != 0); }
}
