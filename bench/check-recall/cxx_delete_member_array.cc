// CWE-590 (C++): delete[] of an array member of an object on the stack.
#include "rc.h"
struct Frame { int id; int slots[8]; };
static void run(int bad)
{
    Frame f{};
    int *slots = bad ? f.slots : new int[8]();
    slots[0] = 1;
    rc_int(slots[0] + f.id);
    delete[] static_cast<int *>(rc_p(slots)); // BAD when slots is the member
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
