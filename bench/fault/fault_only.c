/*
 * The fault-only round trip: the least one access costs a tracer that never opens a page, as fault mode's
 * redirected route does. One memfd is mapped twice: a protected view and an always-open alias. Each of N
 * loads through a register that points into the protected view faults; the SIGSEGV handler moves that
 * register to the same offset in the alias (in the signal frame) and returns (rt_sigreturn); the load is
 * retried and reads the alias. Per iteration: one fault and one sigreturn, no other system call.
 *
 * Output: "fault_only <N> faults <us> us/fault" (wall clock, CLOCK_MONOTONIC, after a warm-up of N/10).
 *
 * What it gets wrong: one page, one thread, and a handler that does nothing else (no lookup, no record), so
 * it is a floor, not an estimate; the load's register is fixed (rax) where the agent copies the instruction
 * with a scratch register of its choosing. Run it natively, not under memtrace.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#include "probe.h"

static char *prot_view, *alias_view;

static void on_segv(int sig, siginfo_t *si, void *ucv)
{
    (void)sig; (void)si;
    ucontext_t *uc = ucv;
    greg_t *rax = &uc->uc_mcontext.gregs[REG_RAX];
    faults++;
    *rax = (greg_t)(alias_view + ((char *)*rax - prot_view));
}

static void loop(long n)
{
    for (long i = 0; i < n; i++) {
        const char *at = prot_view + (i & 63) * 8;
        long v;
        /* rax is the address the handler rewrites: the load must name it */
        __asm__ volatile("mov (%%rax), %0" : "=r"(v), "+a"(at) : : "memory");
        (void)v;
    }
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000;
    long psize = sysconf(_SC_PAGESIZE);
    int fd = memfd_create("fault_only", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, psize)) { perror("fault_only: memfd"); return 2; }
    prot_view = mmap(NULL, psize, PROT_NONE, MAP_SHARED, fd, 0);
    alias_view = mmap(NULL, psize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (prot_view == MAP_FAILED || alias_view == MAP_FAILED) { perror("fault_only: mmap"); return 2; }
    catch_segv(on_segv);
    return measure("fault_only", n, loop);
}
