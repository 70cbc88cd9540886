// CWE-762 (C++): a malloc'ed buffer released with delete[].
#include <cstdlib>
#include <cstring>
#include "rc.h"
static void run(int bad)
{
    char *buf = static_cast<char *>(malloc(rc_n(32)));
    memset(buf, 'm', 32);
    rc_sum(buf, 32);
    if (bad) delete[] buf; // BAD
    else free(buf);
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
