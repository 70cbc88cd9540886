/*
 * rw_trap.c: the int3 fallback of `memtrace run --mode rewrite` (docs/rewriting.md, "Fallback"). Part of
 * libmemtrace-rt.so. A memory instruction too short for a jump whose neighbours cannot move keeps its place:
 * the planner gives it a trampoline of its own (one part: the instruction, probed as every trampoline probes,
 * its RIP-relative displacement re-aimed and a call emulated by the assembler's and linker's work, then a jump
 * back after it, or after the copies of its tail: docs/rewriting.md, "Trampoline tails"; a trapped
 * instruction reached by falling through from a patched one runs in that one's tail and never traps), and
 * rw_apply.c writes one `int3` (0xcc) over its first byte and gives this file the table
 * of those places (rw_trap_add), sorted by address, one table per applied module. When the instruction is
 * reached, the kernel delivers SIGTRAP; the runtime's handler (rt_signal.c, which keeps SIGTRAP while the
 * program only records its own action for it, as for SIGSEGV) asks rw_trap first: a trap of an int3 (si_code
 * SI_KERNEL) one byte after a place in a table, where the byte is still 0xcc, sends the thread to that place's
 * trampoline by setting the context's %rip. Every other register, the flags and the signal mask come back as
 * they were when the kernel returns from the handler, so the trampoline starts in the state the instruction
 * would have, records the instruction's accesses into the thread's buffer (the same records and site names
 * as a jump-reached trampoline), runs it and returns after it. Every other SIGTRAP (raise, kill, an int3 of
 * the program's, a debugger's breakpoint the kernel reports to the program) is the program's: rt_signal.c
 * calls its handler, or dies of it as the default action would.
 *
 * How it reads: nothing on stderr; the counts of traps taken and of the accesses their trampolines record go
 * into the trace as one MT_FALLBACK record before MT_EXIT (rw_trap_report), which the summary prints. A
 * runtime built with -DMT_PROFILE (agent/Makefile) also counts traps per place and prints, at exit, one
 * "rw_trap: BIAS OFFSET TRAPS" line on stderr for each place that trapped 100 times or more (the offset in the
 * module loaded at BIAS): how docs/rewriting.md, "Indirect jumps", found the hot places.
 *
 * What it gets wrong: a trap costs a signal's delivery and return (about 1-3 µs, docs/rewriting.md,
 * "Measured"); a thread that runs a trapped instruction while it blocks SIGTRAP with a raw system call (libc
 * blocks every signal itself inside pthread_create, posix_spawn and a thread's start and end) is killed
 * by the kernel, which cannot deliver a blocked trap (the planner's choices and the tests show which code
 * that is); a debugger that stops on SIGTRAP stops at every trap. The counts include traps taken while the
 * runtime runs rewritten libc for itself (its accesses go to the sink) and while recording is stopped. The
 * tables of modules dlclose unloaded are kept (a handler in another thread may be reading one); a library
 * opened and closed in a loop costs its table at each load.
 */
#include <signal.h>
#include <sys/mman.h>

#include "../runtime/rt.h"

#define RW_TABLES 512 /* tables ever added; a dlopen in a loop adds one per load */

struct rw_trap_table {
    uint64_t lo, hi;      /* the first and the last place, at run time */
    uint64_t module_bias; /* rw_trap_forget finds the table by it */
    uint32_t n;
#ifdef MT_PROFILE
    uint64_t *hits; /* traps per place, printed at exit (rw_trap_report) */
#endif
    struct rw_trap_entry e[];
};

static struct rw_trap_table *volatile tables[RW_TABLES];
static int used; /* slots ever taken: a forgotten table's slot stays NULL */
static uint64_t traps, accesses;

int rw_trap_add(uint64_t module_bias, const struct rw_trap_entry *e, uint32_t n)
{
    if (!n) return 1;
    if (used == RW_TABLES) return 0;
    size_t bytes = sizeof(struct rw_trap_table) + (size_t)n * sizeof *e;
    struct rw_trap_table *t = rt_map(bytes);
    if (!t) return 0;
    rt_memcpy(t->e, e, (size_t)n * sizeof *e);
    t->lo = e[0].at;
    t->hi = e[n - 1].at;
    t->module_bias = module_bias;
    t->n = n;
#ifdef MT_PROFILE
    t->hits = rt_map((size_t)n * sizeof *t->hits);
#endif
    /* the table complete before a handler can find it (an int3 is written only after this returns) */
    __atomic_store_n(&tables[used], t, __ATOMIC_RELEASE);
    used++;
    return 1;
}

void rw_trap_forget(uint64_t module_bias)
{
    for (int i = 0; i < used; i++) {
        struct rw_trap_table *t = tables[i];
        if (t && t->module_bias == module_bias) __atomic_store_n(&tables[i], NULL, __ATOMIC_RELEASE);
    }
}

int rw_trap_active(void) { return used > 0; }

#define BIT(s) (1ULL << ((s) - 1))

/*
 * The thread's rt_sigprocmask(how=%rdi, set=%rsi, old=%rdx, size=%r10), made on the context: the mask the
 * kernel puts back when the handler returns is the thread's, so the call changes that one, SIGTRAP and
 * SIGSEGV left out (the fallback's trap and a probe's fault must never be blocked). %rax, %rcx and %r11
 * as the syscall instruction leaves them; the thread goes on after it (next).
 */
static void sigmask_call(ucontext_t *uc, uint64_t next)
{
    greg_t *g = uc->uc_mcontext.gregs;
    uint64_t how = (uint64_t)g[REG_RDI], set = (uint64_t)g[REG_RSI], old = (uint64_t)g[REG_RDX], cur, want;
    long rv = 0;
    rt_memcpy(&cur, &uc->uc_sigmask, 8);
    want = cur;
    if (g[REG_R10] != 8) rv = -22; /* EINVAL */
    else if (set) {
        uint64_t s;
        rt_memcpy(&s, (const void *)(uintptr_t)set, 8);
        if (how == SIG_BLOCK) want = cur | s;
        else if (how == SIG_UNBLOCK) want = cur & ~s;
        else if (how == SIG_SETMASK) want = s;
        else rv = -22;
    }
    if (!rv) {
        if (old) rt_memcpy((void *)(uintptr_t)old, &cur, 8);
        want &= ~(BIT(SIGKILL) | BIT(SIGSTOP) | BIT(SIGTRAP) | BIT(SIGSEGV));
        rt_memcpy(&uc->uc_sigmask, &want, 8);
    }
    g[REG_RAX] = rv;
    g[REG_RCX] = (greg_t)next;
    g[REG_R11] = g[REG_EFL];
    g[REG_RIP] = (greg_t)next;
}

int rw_trap(const siginfo_t *si, ucontext_t *uc)
{
    if (si->si_code != SI_KERNEL) return 0;
    uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP] - 1;
    for (int i = 0; i < RW_TABLES; i++) {
        struct rw_trap_table *t = __atomic_load_n(&tables[i], __ATOMIC_ACQUIRE);
        if (!t) {
            if (i >= __atomic_load_n(&used, __ATOMIC_RELAXED)) break;
            continue;
        }
        if (pc < t->lo || pc > t->hi) continue;
        uint32_t a = 0, b = t->n;
        while (a < b) {
            uint32_t m = a + (b - a) / 2;
            if (t->e[m].at < pc) a = m + 1;
            else b = m;
        }
        if (a == t->n || t->e[a].at != pc || *(const volatile unsigned char *)pc != 0xcc) break;
        if (t->e[a].flags & RW_TRAP_SIGMASK) {
            if (uc->uc_mcontext.gregs[REG_RAX] == SYS_rt_sigprocmask) sigmask_call(uc, pc + 2);
            else uc->uc_mcontext.gregs[REG_RIP] = (greg_t)t->e[a].to; /* another call after all: made out of line */
            return 1;
        }
        uc->uc_mcontext.gregs[REG_RIP] = (greg_t)t->e[a].to;
#ifdef MT_PROFILE
        if (t->hits) __atomic_add_fetch(&t->hits[a], 1, __ATOMIC_RELAXED);
#endif
        __atomic_add_fetch(&traps, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&accesses, t->e[a].accesses, __ATOMIC_RELAXED);
        return 1;
    }
    return rw_arm(uc, pc); /* a trampoline armed for access stacks (rw_arm.c) */
}

void rw_trap_forked(void)
{
    traps = 0;
    accesses = 0;
}

#ifdef MT_PROFILE
/* a space, then v in hex (base 16) or decimal, at *p */
static void put(char **p, uint64_t v, unsigned base)
{
    char d[24];
    int n = 0;
    do d[n++] = "0123456789abcdef"[v % base]; while ((v /= base));
    *(*p)++ = ' ';
    while (n) *(*p)++ = d[--n];
}

/* stderr: "rw_trap: BIAS OFFSET TRAPS" for each place that trapped 100 times or more (offset from the bias) */
static void profile_report(void)
{
    for (int i = 0; i < used; i++) {
        struct rw_trap_table *t = tables[i];
        if (!t || !t->hits) continue;
        for (uint32_t k = 0; k < t->n; k++) {
            if (t->hits[k] < 100) continue;
            char line[96], *p = line;
            rt_memcpy(p, "rw_trap:", 8);
            p += 8;
            put(&p, t->module_bias, 16);
            put(&p, t->e[k].at - t->module_bias, 16);
            put(&p, t->hits[k], 10);
            *p++ = '\n';
            mt_sys6(SYS_write, 2, (long)line, p - line, 0, 0, 0);
        }
    }
}
#endif

void rw_trap_report(void)
{
    if (!used) return;
#ifdef MT_PROFILE
    profile_report();
#endif
    RT_REC(MT_FALLBACK, struct mt_fallback, r);
    r.traps = __atomic_load_n(&traps, __ATOMIC_RELAXED);
    r.accesses = __atomic_load_n(&accesses, __ATOMIC_RELAXED);
    r.puns = __atomic_load_n(&rw_puns[0], __ATOMIC_RELAXED);
    r.puns_bytes = __atomic_load_n(&rw_puns[1], __ATOMIC_RELAXED);
    r.puns_page = __atomic_load_n(&rw_puns[2], __ATOMIC_RELAXED);
    rt_emit(&r, sizeof r);
}
