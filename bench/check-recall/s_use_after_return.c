/* Stack use after return (ASan's stack-use-after-return test): a pointer to a callee's local array, read
 * after the callee returned. */
#include "rc.h"
static int *volatile saved;
__attribute__((noinline)) static void fill(int bad)
{
    int local[16];
    for (int i = 0; i < 16; i++) local[i] = i;
    if (bad) saved = local;
    rc_sum(local, sizeof local);
}
__attribute__((noinline)) static void clobber(void)
{
    volatile char junk[256];
    for (int i = 0; i < 256; i++) junk[i] = 0;
}
static void run(int bad)
{
    static int stay[16];
    saved = stay;
    fill(bad);
    clobber();
    rc_int(saved[5]); /* BAD: the callee's frame is gone */
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
