// CWE-121 (C++): std::array's operator[] (unchecked) one past the end of a stack array.
#include <array>
#include "rc.h"
static void run(size_t at)
{
    std::array<int, 5> a{};
    a[rc_n(at)] = 9; // BAD when at is 5
    rc_sum(a.data(), sizeof a);
}
static void bad(void) { run(5); }
static void good(void) { run(4); }
RC_MAIN
