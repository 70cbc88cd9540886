// CWE-416: c_str() of a temporary std::string kept past the full expression; the string's heap buffer was
// freed when the temporary died. Twin: the string is kept in a variable.
#include <cstring>
#include <string>
#include "corpus.h"

namespace cxx_uaf_string_temp {
static std::string make(int n) { return std::string("a rather long prefix, past SSO: ") + std::to_string(n); }

static void run(bool bad)
{
    std::string kept = make(7);
    const char *s = bad ? make(7).c_str() : kept.c_str();
    print_int(static_cast<long>(std::strlen(s))); /* BAD */
}

void bad() { run(opaque(1) != 0); }
void good() { run(opaque(0) != 0); }
}
