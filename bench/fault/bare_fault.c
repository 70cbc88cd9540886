/*
 * The bare fault round trip: the least one access costs a tracer that catches accesses with page
 * protection. A page is protected; each of N reads of it faults; the SIGSEGV handler gives the page its
 * rights back (one mprotect) and returns (rt_sigreturn); the read completes; the loop takes the rights away
 * again (the second mprotect). Per iteration: the fault, two mprotect and the sigreturn, the four system
 * events fault mode cannot do without.
 *
 * Output: "bare_fault <N> faults <us> us/fault" (wall clock, CLOCK_MONOTONIC, after a warm-up of N/10).
 *
 * What it gets wrong: the page is one page of a small process with one thread, so mprotect shoots down no
 * other CPU's TLB, and the handler does nothing else; a real program's fault costs more. Run it natively,
 * not under memtrace (the agent would trace the page itself).
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "probe.h"

static volatile char *page;
static long psize;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)sig; (void)si; (void)uc;
    faults++;
    mprotect((void *)page, psize, PROT_READ | PROT_WRITE);
}

static void loop(long n)
{
    for (long i = 0; i < n; i++) {
        (void)page[i & 63];
        mprotect((void *)page, psize, PROT_NONE);
    }
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000;
    psize = sysconf(_SC_PAGESIZE);
    page = mmap(NULL, psize, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    catch_segv(on_segv);
    return measure("bare_fault", n, loop);
}
