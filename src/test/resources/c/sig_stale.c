/* A program for CcSignalCursorTest: a register that points past the thread's cursor, in its buffer, while
 * no probe uses it, when a signal lands. A probe whose cursor register C is dead leaves the cursor in C;
 * once the buffer is written and comes back from the pool, that stale value points past the new cursor.
 * Here the stale value is made on purpose (the cursor read plus 48 slots, in %rdx, %r11 and %rcx, the
 * first of the probes' scratch registers; the cursor is the runtime's __memtrace_cursor, or the copy a
 * `memtrace cc` executable defines, found by dlsym; without memtrace the value is null) and a store through inline assembly, which no probe precedes,
 * faults on a page the program protected: its SIGSEGV handler counts the fault (a traced store) and opens
 * the page again. Each round first adds to data[] (traced), so with small buffers they fill and are
 * reused all the time. Arguments: rounds, then "fault" (the page protected each round), "plain" (never)
 * or "crash" (protected after the last round, with no handler: the program dies of SIGSEGV there).
 * It prints rounds and faults handled.
 * What it gets wrong: the stale value lies past the buffer's end when the cursor is within 48 slots of
 * it (the runtime then had nothing to take even when it guessed). */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>


long data[64];
static volatile long handled;
static char *page;
static long pagesize;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)si, (void)uc;
    handled++;
    mprotect(page, pagesize, PROT_READ | PROT_WRITE);
}

static char **cursor; /* this thread's __memtrace_cursor */

/* A pointer 48 slots past the thread's cursor. */
static char *past_cursor(void) { return cursor ? *cursor + 16 * 48 : NULL; }

static __attribute__((noinline)) void store(long v, char *stale)
{
    register char *r11 __asm__("r11") = stale;
    __asm__ volatile("movq %0, (%1)" : : "r"(v), "r"(page), "d"(stale), "c"(stale), "r"(r11) : "memory");
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 1000;
    const char *how = argc > 2 ? argv[2] : "fault";
    pagesize = sysconf(_SC_PAGESIZE);
    cursor = dlsym(RTLD_DEFAULT, "__memtrace_cursor");
    page = mmap(NULL, pagesize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (strcmp(how, "crash")) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_segv;
        sa.sa_flags = SA_SIGINFO;
        sigaction(SIGSEGV, &sa, NULL);
    }
    for (long r = 0; r < rounds; r++) {
        for (long i = 0; i < 64; i++) data[i] += r;
        if (!strcmp(how, "fault")) mprotect(page, pagesize, PROT_NONE);
        store(r, past_cursor());
    }
    printf("%ld %ld\n", rounds, handled);
    fflush(stdout);
    if (!strcmp(how, "crash")) {
        mprotect(page, pagesize, PROT_NONE);
        store(rounds, past_cursor());
    }
    return 0;
}
