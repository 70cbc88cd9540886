// CWE-415: one raw pointer given to two std::unique_ptr owners; both delete it. Twin: one owner.
#include <memory>
#include "corpus.h"

namespace cxx_double_delete_owners {
struct buffer { char bytes[24]; };

static void run(bool bad)
{
    buffer *raw = new buffer();
    std::unique_ptr<buffer> a(raw);
    std::unique_ptr<buffer> b(bad ? raw : nullptr);
    print_int(static_cast<long>(sizeof a->bytes));
} /* BAD */

void bad() { run(opaque(1) != 0); }
void good() { run(opaque(0) != 0); }
}
