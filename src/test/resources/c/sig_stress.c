/* A program for CcSignalStressTest: a 20 µs timer whose handler makes traced accesses interrupts everything
 * a `memtrace cc` build runs: a hundred small functions called through a table (group probes), a
 * vectorized loop that keeps its cursor in a register, and a malloc/free every 64 calls, whose wrapper
 * writes its events past the cursor before claiming them (rt_emit_seq). With 16 or 64 KB buffers each
 * fills thousands of times and comes back from the pool. It prints what the trace must then hold: calls
 * (three accesses each to cells[]), loops (a[] read and written whole), the handler's runs (a store to
 * marks each) and the mallocs, each with one allocation and one free event.
 * What it gets wrong: where the timer lands is up to the kernel; a run shows a broken handling only when a
 * signal lands in the wrong instruction (before the fix, 5 runs of 6 broke). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define F(i) __attribute__((noinline)) static long f##i(long *p, long x) { p[(i * 7) % 61] += x; return p[(i * 13) % 59] ^ x; }
#define F10(a) F(a##0) F(a##1) F(a##2) F(a##3) F(a##4) F(a##5) F(a##6) F(a##7) F(a##8) F(a##9)
#define N(i) f##i,
#define N10(a) N(a##0) N(a##1) N(a##2) N(a##3) N(a##4) N(a##5) N(a##6) N(a##7) N(a##8) N(a##9)
#define FUNCTIONS 100
F10(10) F10(11) F10(12) F10(13) F10(14) F10(15) F10(16) F10(17) F10(18) F10(19)
static long (*const functions[FUNCTIONS])(long *, long) = {
    N10(10) N10(11) N10(12) N10(13) N10(14) N10(15) N10(16) N10(17) N10(18) N10(19)
};

long cells[64], a[256];
static volatile long ticks, marks;
static void on_alarm(int sig) { (void)sig; marks = ticks; ticks++; }

static unsigned next_random(unsigned *x) { return *x = *x * 1103515245u + 12345u; }

int main(int argc, char **argv) {
    long calls = argc > 1 ? atol(argv[1]) : 200000, loops = 0, mallocs = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval t = {{0, 20}, {0, 20}}, off;
    memset(&off, 0, sizeof off);
    setitimer(ITIMER_REAL, &t, NULL);
    unsigned x = 11;
    long total = 0;
    for (long r = 0; r < calls; r++) {
        total += functions[(next_random(&x) >> 10) % FUNCTIONS](cells, r);
        if (r % 64 == 0) {
            free(malloc(64 + r % 100));
            mallocs++;
            for (long i = 0; i < 256; i++) a[i] += r;
            loops++;
        }
    }
    setitimer(ITIMER_REAL, &off, NULL);
    printf("%ld %ld %ld %ld %ld\n", calls, loops, ticks, mallocs, total & 1);
    return 0;
}
