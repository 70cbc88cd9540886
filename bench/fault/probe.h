/*
 * What the fault probes (bare_fault.c, fault_only.c) share: the clock, the SIGSEGV handler's installation,
 * and the measure itself: a warm-up of N/10 iterations, then N timed ones, printed as
 * "<name> <N> faults <us> us/fault" (wall clock, CLOCK_MONOTONIC). Each probe counts its faults in `faults`;
 * the exit status is 0 only when every iteration faulted exactly once.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static volatile long faults;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void catch_segv(void (*handler)(int, siginfo_t *, void *))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
}

/* `loop(n)` runs n faulting iterations; returns the probe's exit status. */
static int measure(const char *name, long n, void (*loop)(long))
{
    loop(n / 10);
    double t0 = now();
    loop(n);
    printf("%s %ld faults %.3f us/fault\n", name, n, (now() - t0) * 1e6 / n);
    return faults == n + n / 10 ? 0 : 1;
}
