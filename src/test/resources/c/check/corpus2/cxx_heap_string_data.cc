// CWE-122: bytes copied through &s[0] into a std::string sized for fewer; the write runs past its heap
// buffer. Twin: the string is resized first.
#include <cstring>
#include <string>
#include "corpus.h"

namespace cxx_heap_string_data {
static void run(bool bad)
{
    static const char src[] = "0123456789012345678901234567890123456789";
    std::string s(20, '.');
    if (!bad) s.resize(40);
    std::memcpy(&s[0], src, 40); /* BAD */
    print_bytes(s.data(), 20);
}

void bad() { run(opaque(1) != 0); }
void good() { run(opaque(0) != 0); }
}
