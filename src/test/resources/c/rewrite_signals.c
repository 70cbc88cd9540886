/* Rewrite mode under signals: a 50 us profiling timer interrupts the trampolines of a loop (the runtime rewinds
 * an interrupted probe, so each access is recorded once), then a store faults in its trampoline and the
 * program's SIGSEGV handler leaves by siglongjmp (RewriteRunTest). */
#include <signal.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
volatile long ticks;
long data[4096];
static sigjmp_buf back;
static void tick(int s) { (void)s; ticks = ticks + 1; }
static void segv(int s) { (void)s; siglongjmp(back, 1); }
int main(void) {
    struct sigaction sa; memset(&sa, 0, sizeof sa); sa.sa_handler = tick; sigaction(SIGPROF, &sa, 0);
    struct itimerval it = {{0, 50}, {0, 50}}; setitimer(ITIMER_PROF, &it, 0);
    for (int r = 0; r < 300; r++)
        for (int i = 0; i < 4096; i++) data[i] = data[i] * 3 + r;
    struct itimerval off = {{0, 0}, {0, 0}}; setitimer(ITIMER_PROF, &off, 0);
    sa.sa_handler = segv; sigaction(SIGSEGV, &sa, 0);
    int jumped = 0;
    if (sigsetjmp(back, 1) == 0) { *(volatile long *)(long)16 = 1234567; } else jumped = 1;
    printf("%ld %d %s\n", data[5], jumped, ticks > 0 ? "ticked" : "no ticks");
    return 0;
}
