// CWE-401: a buffer new[]'d before a call that throws; the catch is in the caller, the buffer is never freed.
// Twin: a std::unique_ptr holds it.
#include <memory>
#include <stdexcept>
#include "corpus.h"

namespace cxx_leak_throw {
static void parse(long v) { if (v > 2) throw std::runtime_error("bad value"); }

static void load(bool bad)
{
    if (bad) {
        char *buf = new char[48];
        buf[0] = 1;
        parse(static_cast<long>(opaque(3)));
        delete[] buf;
    } else {
        std::unique_ptr<char[]> buf(new char[48]);
        buf[0] = 1;
        parse(static_cast<long>(opaque(3)));
    }
}

static void run(bool bad)
{
    try { load(bad); } catch (const std::exception &e) { print_line(e.what()); }
}

void bad() { run(opaque(1) != 0); }
void good() { run(opaque(0) != 0); }
}
