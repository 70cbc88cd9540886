// CWE-762 (C++): a strdup'ed string released with delete.
#include <cstdlib>
#include <cstring>
#include "rc.h"
static void run(int bad)
{
    char *s = strdup(static_cast<const char *>(rc_p((void *)"duplicate")));
    rc_sum(s, strlen(s));
    if (bad) delete s; // BAD
    else free(s);
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
