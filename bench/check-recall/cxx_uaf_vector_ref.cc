// CWE-416 (C++): a reference into a std::vector kept across push_back (which reallocates).
#include <vector>
#include "rc.h"
static void run(int bad)
{
    std::vector<int> v;
    v.reserve(4);
    for (int i = 0; i < 4; i++) v.push_back(i);
    int &first = v[0];
    if (bad) v.push_back(4); // reallocates: first dangles
    first = 10;              // BAD
    rc_int(v[0]);
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
