// CWE-122 (CWE-193): new char[s.size()] for a std::string's copy, strcpy writes the terminator past it.
#include <cstring>
#include <string>
#include "corpus.h"

namespace cxx_string_copy {
static void run(size_t extra)
{
    std::string s = static_cast<const char *>(opaque_ptr(const_cast<char *>("a string of some length")));
    char *copy = new char[s.size() + extra];
    strcpy(copy, s.c_str()); /* BAD */
    print_line(copy);
    delete[] copy;
}

void bad() { run(opaque(0)); }
void good() { run(opaque(1)); }
}
