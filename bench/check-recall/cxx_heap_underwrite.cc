// CWE-124 (C++): a write at index -1 of new char[] (a reverse loop one step too far).
#include "rc.h"
static void run(long stop)
{
    size_t n = rc_n(16);
    char *s = new char[n];
    for (long i = (long)n - 1; i >= stop; i--) s[i] = 'u'; // BAD when stop is -1
    rc_sum(s, n);
    delete[] s;
}
static void bad(void) { run(-1); }
static void good(void) { run(0); }
RC_MAIN
