// CWE-416 (C++): a method called on an object after delete (it reads a member).
#include "rc.h"
struct Account {
    long balance = 0;
    __attribute__((noinline)) long get() const { return balance; }
};
static void run(int bad)
{
    Account *a = new Account;
    a->balance = 100;
    if (bad) delete a;
    rc_int(a->get()); // BAD
    if (!bad) delete a;
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
