// CWE-121: an object on the stack whose array member is filled one past its end, out of the object.
#include "corpus.h"

namespace cxx_stack_array_member {
struct packet {
    int header;
    char payload[16];
};

static void fill(size_t n)
{
    packet p{};
    p.header = 1;
    for (size_t i = 0; i < n; i++) p.payload[i] = 'p'; /* BAD */
    print_bytes(&p, sizeof p);
}

void bad() { fill(opaque(21)); }
void good() { fill(opaque(16)); }
}
