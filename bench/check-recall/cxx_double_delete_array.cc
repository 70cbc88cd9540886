// CWE-415 (C++): delete[] twice through two owners.
#include "rc.h"
struct Holder { int *data; };
static void run(int bad)
{
    int *d = new int[8]();
    Holder a{d}, b{bad ? d : new int[8]()};
    delete[] a.data;
    delete[] b.data; // BAD when both hold d
    rc_int(0);
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
