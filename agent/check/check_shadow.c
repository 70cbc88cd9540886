/*
 * check_shadow.c: the shadow memory of `memtrace cc --check` and the entry points the checked code calls.
 *
 * Layout: gcc's -fsanitize=address one for x86-64 Linux (shadow byte of addr at (addr >> 3) + 0x7fff8000),
 * because gcc writes stack redzones' shadow inline at that address; the whole shadow range
 * [0x7fff8000, 0x10007fff8000) is one MAP_NORESERVE mapping made before the first check or allocation.
 * The values are memtrace's own (check.h); the code is not libsanitizer's.
 *
 * Entry points:
 *   __asan_load{1,2,4,8,16} / __asan_store{...}(addr)    gcc's outline checks (-fsanitize=address with
 *   __asan_loadN / __asan_storeN(addr, size)              asan-instrumentation-with-call-threshold=0)
 *   __memtrace_slow_{load,store}{1,2,4,8}(addr)          the slow path of a check the rewriter inlined
 *                                                        (shadow byte not 0, or a granule crossed)
 *   __memtrace_slow_group(base, desc)                    one check for a block's accesses from one base
 *                                                        (memtrace's pruning), exact when the span is not;
 *                                                        the rewriter tests a span up to 57 bytes inline and
 *                                                        calls it when that span's shadow is not all 0
 *   __memtrace_check_loop(first, last, size|write<<8|single<<9|rows<<10|step<<16[, width in %rcx])
 *                                                        one check for all the accesses of a loop, called at
 *                                                        the loop's entry; saves every register and the flags;
 *                                                        [min, max + size) whole, or each access's bytes when
 *                                                        the stride is over 64 bytes; single: one access
 *                                                        (reported as such, not "by the loop")
 *                                                        and, strided, its range against the live
 *                                                        block of its first access (mc_escapes)
 *   __memtrace_check_index(addr, base, size|write<<8|either<<9)
 *                                                        a single indexed access (p[i], outside loops) whose
 *                                                        bytes are addressable, 96 bytes or more from its base:
 *                                                        still inside the live block of its base? (either: the
 *                                                        base may be the index, addr - base the pointer)
 *   __asan_report_{load,store}{1,2,4,8,16,_n}[_noabort](addr[, size])
 *                                                        gcc's inline checks' reports (its default threshold):
 *                                                        called only when gcc's own shadow test failed
 *   __asan_register_globals & co., __asan_handle_no_return, stack scope and alloca poisoning: what gcc's
 *   layout of globals and frames needs.
 * The slow path of `memtrace run --check --mode rewrite`'s trampolines is check_rwprobe.c's (a `rep movs`/
 * `stos`/`lods` is tested there over its whole %rcx range each time). A SIGSEGV or SIGBUS that no check
 * foresaw (a wild pointer into unmapped memory, a write to read-only memory, an absolute operand rewrite mode
 * does not patch) is said by on_fault below as ASan says "SEGV on unknown address" (mc_report_segv: "null
 * dereference" in the first 64 KB, else "wild access" with the kernel's reason; a ret that takes a smashed
 * return address: "stack overflow", a stack smash, as fault mode says it), then the program dies of the
 * signal as natively; the program's own handler, when it has one, gets the signal instead.
 * Counters (checks executed, accesses they covered) are per thread, each thread's linked in a list from its start
 * (pthread_create's wrapper) or its first call here, and summed at exit over ended and running threads; a libc
 * check is counted only when the program called the function, not this runtime or the tracing runtime.
 *
 * What it gets wrong: a thread libc starts without pthread_create's PLT entry (a SIGEV_THREAD timer's) is counted
 * only if it calls this runtime (then wholly: its inline counters ran from its start) or is running at exit; a
 * forked child's summary holds its parent's counts up to the fork, as its memory does; an access at an
 * address of 2^47 or above faults in the check (as it would in the program). handle_no_return unpoisons the
 * thread's stack from the caller up, so the redzones of the live frames above a throw or longjmp are forgotten.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <ucontext.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "check_block.h"

static int shadow_ready;

struct thread_counts {
    struct mc_counts c;
    uint64_t rest;      /* while a slow path reports: the checks of its run after it (rest_of_run) */
    int registered;
    /* every registered thread's counters, linked while it runs (counts_lock), so the summary sums the threads
     * still running at exit too, whichever thread calls exit; its inline counters' addresses, read from there */
    struct thread_counts *prev, *next;
    uint64_t *inline_checks, *grouped;
    uintptr_t tp;       /* its thread pointer (%fs:0): its static TLS lies below, its DTV's address above */
};
static __thread struct thread_counts tc __attribute__((tls_model("initial-exec")));
/* checks the rewriter inlined (shadow byte 0: no call) are counted here, a run of them at once at its first check
 * (memtrace cc's CheckRewriter: a run has no label, jump or call between its checks) */
MC_EXPORT __thread uint64_t __memtrace_check_inline __attribute__((tls_model("initial-exec")));
/* group checks, counted inline by each group (BlockMerge): [0] the group checks, [1] the accesses they stand for */
MC_EXPORT __thread uint64_t __memtrace_check_grouped[2] __attribute__((tls_model("initial-exec")));
static struct mc_counts ended;          /* threads that ended */
static struct thread_counts *running;   /* registered threads that have not ended */
static pthread_mutex_t counts_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t counts_key;

/* out += a thread's counts, its inline ones included */
static void add_thread(struct mc_counts *out, const struct thread_counts *t)
{
    uint64_t inl = __atomic_load_n(t->inline_checks, __ATOMIC_RELAXED);
    uint64_t groups = __atomic_load_n(&t->grouped[0], __ATOMIC_RELAXED), grouped = __atomic_load_n(&t->grouped[1], __ATOMIC_RELAXED);
    out->checks += t->c.checks + inl + groups;
    out->accesses += t->c.accesses + inl + grouped;
    out->loop_checks += t->c.loop_checks;
    out->range_checks += t->c.range_checks + groups;
    out->libc_checks += t->c.libc_checks;
}

static void thread_ended(void *unused)
{
    pthread_mutex_lock(&counts_lock);
    add_thread(&ended, &tc);
    if (tc.prev) tc.prev->next = tc.next; else running = tc.next;
    if (tc.next) tc.next->prev = tc.prev;
    __memtrace_check_inline = 0;
    __memtrace_check_grouped[0] = __memtrace_check_grouped[1] = 0;
    memset(&tc.c, 0, sizeof tc.c);
    /* tc.registered stays: a later destructor's checks are not counted, and never link this TLS again, which
     * may be gone when the summary would read it */
    pthread_mutex_unlock(&counts_lock);
}

static void register_thread(void)
{
    /* registered first: a signal handler's check in between must not take the lock again */
    tc.registered = 1;
    tc.inline_checks = &__memtrace_check_inline;
    tc.grouped = __memtrace_check_grouped;
    __asm__("mov %%fs:0, %0" : "=r"(tc.tp));
    pthread_mutex_lock(&counts_lock);
    tc.prev = NULL;
    tc.next = running;
    if (running) running->prev = &tc;
    running = &tc;
    pthread_mutex_unlock(&counts_lock);
    /* the main thread's counts are read at exit; other threads add theirs when they end */
    if (getpid() != gettid()) pthread_setspecific(counts_key, &tc);
}

void mc_counts_total(struct mc_counts *out)
{
    pthread_mutex_lock(&counts_lock);
    *out = ended;
    for (const struct thread_counts *t = running; t; t = t->next) add_thread(out, t);
    if (!tc.registered) { /* a thread started without pthread_create (a raw clone) that calls exit */
        tc.inline_checks = &__memtrace_check_inline;
        tc.grouped = __memtrace_check_grouped;
        add_thread(out, &tc);
    }
    pthread_mutex_unlock(&counts_lock);
}

/* A thread whose checks are all inline (counted in __memtrace_check_inline, no call of this runtime) would
 * never register, and its counts would go with its TLS when it ends: pthread_create starts every thread here,
 * registered before the program's start routine runs. The start records come from a static pool (a malloc would
 * be a block of the program's, numbered among its own); the pool is a leak root while a thread has not started
 * (natively its argument waits in the thread's descriptor, on the new stack: anonymous memory, a root). Past
 * 64 threads starting at once the thread starts as before, registered at its first call of the runtime. */
struct thread_start { void *(*fn)(void *); void *arg; int busy; };
static struct thread_start starts[64];

static void *thread_start(void *p)
{
    struct thread_start *s = p;
    void *(*fn)(void *) = s->fn, *arg = s->arg;
    s->fn = NULL;
    s->arg = NULL;
    __atomic_store_n(&s->busy, 0, __ATOMIC_RELEASE);
    if (!tc.registered) register_thread();
    return fn(arg);
}

MC_EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    static typeof(&pthread_create) next;
    if (!next) next = (typeof(next))dlsym(RTLD_NEXT, "pthread_create");
    if (!next) return EAGAIN;
    for (unsigned i = 0; i < sizeof starts / sizeof starts[0]; i++) {
        struct thread_start *s = &starts[i];
        if (__atomic_exchange_n(&s->busy, 1, __ATOMIC_ACQUIRE)) continue;
        s->fn = fn;
        s->arg = arg;
        int rc = next(t, attr, thread_start, s);
        if (rc) { s->fn = NULL; s->arg = NULL; __atomic_store_n(&s->busy, 0, __ATOMIC_RELEASE); }
        return rc;
    }
    return next(t, attr, fn, arg);
}

/* a thread not started yet: its argument is a root (mc_leak_check) */
void mc_thread_starts_scan(void (*scan)(void *s, uintptr_t from, uintptr_t to), void *s)
{
    for (unsigned i = 0; i < sizeof starts / sizeof starts[0]; i++)
        if (__atomic_load_n(&starts[i].busy, __ATOMIC_ACQUIRE) && starts[i].arg)
            scan(s, (uintptr_t)&starts[i].arg, (uintptr_t)(&starts[i].arg + 1));
}

/* Every running thread's thread pointer but the caller's, to each (mc_leak_check: their TLS is a root, as
 * LeakSanitizer takes it). Under counts_lock: a thread that ends leaves the list before its TLS can go. */
void mc_threads_each(void (*each)(uintptr_t tp, void *arg), void *arg)
{
    uintptr_t self;
    __asm__("mov %%fs:0, %0" : "=r"(self));
    pthread_mutex_lock(&counts_lock);
    for (const struct thread_counts *t = running; t; t = t->next)
        if (t->tp && t->tp != self) each(t->tp, arg);
    pthread_mutex_unlock(&counts_lock);
}

/* The checks of an inlined run after the one whose slow call returns to ret: the rewriter follows such a call
 * by `nopl 0x6d74NNNN(%rax)` (0f 1f 80, then NNNN their number and "mt" in the displacement). They were counted at
 * the run's start; a report that stops the program takes them back off (mc_counts_stopped). */
static uint64_t rest_of_run(const void *ret)
{
    const uint8_t *p = ret;
    uint32_t disp;
    if (p[0] != 0x0f || p[1] != 0x1f || p[2] != 0x80) return 0;
    memcpy(&disp, p + 3, sizeof disp);
    return disp >> 16 == 0x6d74 ? (disp & 0xffff) : 0;
}

void mc_counts_stopped(void)
{
    __memtrace_check_inline -= tc.rest;
    tc.rest = 0;
}

/* The code of memtrace's own that calls libc through these wrappers: this library's text and, in a rewrite run,
 * the tracing runtime's (both call memcpy, strlen, strcmp... through their PLT, which binds to the wrappers). */
static struct { uintptr_t s[2], e[2]; int known; } own_code;

static int own_text(struct dl_phdr_info *info, size_t size, void *arg)
{
    /* no libc string function here: it would be a wrapper, which asks own_caller */
    static const char rt_name[] = "/libmemtrace-rt.so";
    uintptr_t mine = (uintptr_t)&own_text;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    size_t len = mt_strlen(name);
    int rt = len >= sizeof rt_name - 1 && mt_strncmp(name + len - (sizeof rt_name - 1), rt_name, sizeof rt_name) == 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        uintptr_t s = info->dlpi_addr + ph->p_vaddr, e = s + ph->p_memsz;
        int k = mine >= s && mine < e ? 0 : rt ? 1 : -1;
        if (k >= 0) { own_code.s[k] = s; own_code.e[k] = e; }
    }
    return 0;
}

static int own_caller(const void *pc)
{
    if (__builtin_expect(!__atomic_load_n(&own_code.known, __ATOMIC_ACQUIRE), 0)) {
        dl_iterate_phdr(own_text, NULL); /* libc's own calls inside are not the wrappers' */
        __atomic_store_n(&own_code.known, 1, __ATOMIC_RELEASE);
    }
    uintptr_t a = (uintptr_t)pc;
    return (a >= own_code.s[0] && a < own_code.e[0]) || (a >= own_code.s[1] && a < own_code.e[1]);
}

void mc_count_libc_n(const void *pc, unsigned n)
{
    if (own_caller(pc)) return;
    if (__builtin_expect(!tc.registered, 0)) register_thread();
    tc.c.checks += n;
    tc.c.libc_checks += n;
    tc.c.accesses += n;
}

void mc_count_libc(const void *pc) { mc_count_libc_n(pc, 1); }

void mc_init_report(void);      /* check_outcome.c: reads MEMTRACE_CHECK* */
void mc_rw_init(void);          /* check_rwprobe.c: the rewrite-mode trampolines' slot */

/* SIGSEGV and SIGBUS that no check foresaw (a wild pointer into unmapped memory, a write to read-only memory,
 * an absolute operand `mov 0x8,%rax` that run --check's rewrite mode does not patch): said as ASan says "SEGV
 * on unknown address" (check_report.c, mc_report_segv), then the program dies of the signal as natively: the
 * handler puts the default action back and returns, so the instruction faults again. Installed only where
 * the program has none at start; a handler the program installs later replaces it, as it would ASan's. The
 * access's size is read off the instruction (operand_bytes; "read"/"written" alone for a form it does not
 * know); a fault by an instruction a rewrite moved into a trampoline behind its check is named by the
 * instruction's own address (moved_from), one moved without a check by the trampoline's address. */
/* A ret that faults taking an overwritten return address (a non-canonical one: a general protection fault at the
 * ret), or the fetch fault at an unmapped one it took (the quad just below %rsp is the address faulted at): at
 * -O0 an overflow of a stack array (gcc's inline moves of a constant-size memcpy, which no wrapper sees) runs
 * over the saved %rbp and the return address, where a binary nobody rebuilt has no redzone. Said as fault mode
 * says it (agent/check_run.c): a stack smash of the function's frame, named by the DWARF table of run --check
 * (check_stackvars.c) or the dynamic symbols, not as a wild access. Returns whether it was one. */
static int smashed_return(siginfo_t *si, const greg_t *gr)
{
    uintptr_t ip = (uintptr_t)gr[REG_RIP], sp = (uintptr_t)gr[REG_RSP];
    uint64_t target, code;
    if (gr[REG_ERR] & 0x10) {
        if ((si->si_code != SEGV_MAPERR && si->si_code != SEGV_ACCERR) || mc_read_word(&target, sp - 8) || target != ip) return 0;
        mc_report_smash(sp - 8, target, NULL, NULL); /* the frame is gone: its ret is not known */
        return 1;
    }
    if (si->si_code != SI_KERNEL || mc_read_word(&code, ip)) return 0;
    unsigned char c0 = (unsigned char)code, c1 = (unsigned char)(code >> 8);
    int ret = c0 == 0xc3 || c0 == 0xc2 || ((c0 == 0xf2 || c0 == 0xf3) && (c1 == 0xc3 || c1 == 0xc2));
    if (!ret || mc_read_word(&target, sp)) return 0;
    uint64_t top = target >> 47;
    if (top == 0 || top == 0x1ffff) return 0; /* canonical: not why the ret faulted */
    const char *fn = mc_stackvars_function(ip);
    Dl_info di;
    if (!fn && dladdr((const void *)ip, &di) && di.dli_sname && di.dli_saddr) fn = di.dli_sname;
    mc_report_smash(sp, target, (const void *)ip, fn);
    return 1;
}

extern __thread int mc_site_insn __attribute__((tls_model("initial-exec")));    /* check_stacks.c */
extern __thread uintptr_t mc_site_rbp __attribute__((tls_model("initial-exec")));

/* The bytes the memory operand of the instruction at ip spans, for the report of a fault (0: not known). No
 * library decoder here: a checked program runs where Zydis may not be installed, and a dlopen inside the
 * handler would, in a rewrite run, stop the dying thread to have the library planned and rewritten. The forms
 * compilers emit for plain loads and stores are read instead: legacy prefixes, REX, one-byte opcodes (mov,
 * the ALU group, test, xchg, inc/dec, shifts, movsxd, push/pop, string moves and stores) and the 0F map's
 * movzx/movsx, cmov, imul, cmpxchg, xadd, movnti and SSE moves and scalar arithmetic. Anything else (VEX,
 * EVEX, the 0F38/0F3A maps, x87): 0, and the report says "read"/"written" alone, as before. */
static size_t operand_bytes(const unsigned char *p)
{
    int osize = 0, rep = 0, repne = 0, w = 0;
    for (int i = 0; i < 14; i++, p++) {
        unsigned c = *p;
        if (c == 0x66) osize = 1;
        else if (c == 0xf3) rep = 1;
        else if (c == 0xf2) repne = 1;
        else if (c == 0x67 || c == 0xf0 || c == 0x2e || c == 0x36 || c == 0x3e || c == 0x26 || c == 0x64 || c == 0x65) continue;
        else break;
    }
    if ((*p & 0xf0) == 0x40) { w = (*p & 8) != 0; p++; }
    size_t v = w ? 8 : osize ? 2 : 4;   /* the operand size of a 16/32/64-bit form */
    unsigned op = *p++, reg = (*p >> 3) & 7;
    if (op < 0x40 && (op & 7) < 4) return (op & 1) ? v : 1;                        /* add, or, adc, sbb, and, sub, xor, cmp */
    switch (op) {
    case 0x88: case 0x8a: case 0xc6: case 0x80: case 0x84: case 0x86: case 0xf6: case 0xfe:
    case 0xc0: case 0xd0: case 0xd2: case 0xa4: case 0xaa: case 0xac:
        return 1;
    case 0x89: case 0x8b: case 0xc7: case 0x81: case 0x83: case 0x85: case 0x87: case 0xf7:
    case 0xc1: case 0xd1: case 0xd3: case 0xa5: case 0xab: case 0xad:
        return v;
    case 0x63: return 4;                                                               /* movsxd: the source */
    case 0x8f: return 8;                                                               /* pop r/m64 */
    case 0xff: return reg == 6 ? 8 : reg < 2 ? v : 0;                                  /* push; inc, dec */
    case 0x0f: break;
    default: return 0;
    }
    op = *p++;
    if (op >= 0x40 && op <= 0x4f) return v;                                            /* cmovcc */
    switch (op) {
    case 0xb6: case 0xbe: case 0xb0: case 0xc0: return 1;                              /* movzx, movsx, cmpxchg, xadd */
    case 0xb7: case 0xbf: return 2;
    case 0xaf: case 0xb1: case 0xc1: case 0xc3: return v;                              /* imul, cmpxchg, xadd, movnti */
    case 0x10: case 0x11: case 0x51: case 0x58: case 0x59: case 0x5c: case 0x5d: case 0x5e: case 0x5f:
        return rep ? 4 : repne ? 8 : 16;                                               /* movss/sd/ups/upd, scalar or packed arithmetic */
    case 0x5a: return rep ? 4 : repne ? 8 : osize ? 16 : 8;                            /* cvtss2sd, cvtsd2ss, cvtpd2ps, cvtps2pd */
    case 0x2a: return rep || repne ? (w ? 8 : 4) : 8;                                  /* cvtsi2ss/sd; cvtpi2ps */
    case 0x2c: case 0x2d: return rep ? 4 : repne ? 8 : osize ? 16 : 8;                 /* cvt(t)ss2si, cvt(t)sd2si */
    case 0x2e: case 0x2f: return osize ? 8 : 4;                                        /* ucomisd/ss, comisd/ss */
    case 0x28: case 0x29: case 0x2b: case 0xe7: return 16;                             /* movaps/apd, movntps, movntdq */
    case 0x12: case 0x13: case 0x16: case 0x17: case 0xd6: return 8;                   /* movlps/hps/lpd/hpd, movq */
    case 0x6f: case 0x7f: return osize || rep ? 16 : 8;                                /* movdqa, movdqu; mmx movq */
    case 0x6e: return w ? 8 : 4;                                                       /* movd/movq to a register */
    case 0x7e: return rep ? 8 : w ? 8 : 4;                                             /* movq xmm, m64; movd/movq from one */
    }
    return 0;
}

static int same(const unsigned char *a, const unsigned char *b, size_t n)
{
    while (n && *a == *b) n--, a++, b++; /* by hand: libc's memcmp here is the checked wrapper */
    return n == 0;
}

/* A rewrite run's trampoline copy of a checked instruction (org.memtrace.rewrite.CheckProbe) follows its check,
 * which ends `call *0x7fff9ff8; .long desc; .long INSN - .` (more words for a stack variable's) and then
 * `pop %rcx; pop %rax; lea 128(%rsp),%rsp`: the instruction's own address in its module, so that a fault there is
 * named by its line and function as any check's report, rather than by the trampoline's address. ip itself
 * when the bytes before it are not those (not in a trampoline, or an unchecked copy such as a RIP-relative one). */
static uintptr_t moved_from(uintptr_t ip)
{
    static const unsigned char tail[10] = {0x59, 0x58, 0x48, 0x8d, 0xa4, 0x24, 0x80, 0, 0, 0};
    static const unsigned char call[7] = {0xff, 0x14, 0x25, 0xf8, 0x9f, 0xff, 0x7f};
    enum { WINDOW = 264 };
    unsigned char b[WINDOW];
    /* words of ip's own page only: the page before may be the module's or unmapped */
    uintptr_t from = (ip - 256) & ~(uintptr_t)7, page = ip & ~(uintptr_t)4095, n = 0;
    if (ip < 256 || from < page) from = page;
    for (uint64_t w; from + n < ip && n + 8 <= WINDOW && !mc_read_word(&w, from + n); n += 8)
        __builtin_memcpy(b + n, &w, 8);
    size_t end = ip - from;
    if (end > n || end < sizeof tail || !same(b + end - sizeof tail, tail, sizeof tail)) return ip;
    /* the last call before the tail: the instruction's check (the words after it: desc, then INSN - .) */
    for (size_t c = end - sizeof tail; c-- > 0;) {
        if (c + sizeof call + 8 > end - sizeof tail || !same(b + c, call, sizeof call)) continue;
        int32_t rel;
        __builtin_memcpy(&rel, b + c + sizeof call + 4, 4);
        return from + c + sizeof call + 4 + (intptr_t)rel;
    }
    return ip;
}

/* Whether the instruction at p is a check's own read of the shadow (its displacement the shadow's base,
 * 0x7fff8000): a non-canonical address's shadow is non-canonical too, so the check faults before the access. */
static int shadow_load(const unsigned char *p)
{
    static const unsigned char base[4] = {0x00, 0x80, 0xff, 0x7f};
    for (int i = 2; i <= 8; i++)
        if (same(p + i, base, 4)) return 1;
    return 0;
}

/* A rewrite run's check (CheckProbe) faulting at its first shadow read, `movzbl 0x7fff8000(%rcx),%ecx; jrcxz;
 * call *0x7fff9ff8; .long desc; .long INSN - .`: the access it tests, from its words (size, write, the
 * instruction's address); its address is %rax. 0 when the bytes at ip are not that. */
static int check_fault(uintptr_t ip, const greg_t *gr, uintptr_t *addr, size_t *size, int *write, uintptr_t *insn)
{
    static const unsigned char head[7] = {0x0f, 0xb6, 0x89, 0x00, 0x80, 0xff, 0x7f};
    static const unsigned char call[7] = {0xff, 0x14, 0x25, 0xf8, 0x9f, 0xff, 0x7f};
    const unsigned char *p = (const unsigned char *)ip;
    if (!same(p, head, 7) || p[7] != 0xe3 || !same(p + 9, call, 7)) return 0;
    uint32_t desc;
    int32_t rel;
    __builtin_memcpy(&desc, p + 16, 4);
    __builtin_memcpy(&rel, p + 20, 4);
    if (desc & 0x60000) return 0; /* a range (rep string) or a stack variable's: not this form */
    *addr = (uintptr_t)gr[REG_RAX];
    *size = desc & 0xffff;
    *write = (desc & 0x10000) != 0;
    *insn = ip + 20 + (intptr_t)rel;
    return 1;
}

static void on_fault(int sig, siginfo_t *si, void *ucv)
{
    ucontext_t *uc = ucv;
    const greg_t *gr = uc->uc_mcontext.gregs;
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigaction(sig, &dfl, NULL);
    if (si->si_code <= 0) { /* sent by kill() or raise(): not a fault, nothing to name */
        raise(sig);
        return;
    }
    if (sig == SIGSEGV && smashed_return(si, gr)) return;
    if (gr[REG_ERR] & 0x10) return; /* an instruction fetch (a jump to nowhere): no data access to name */
    int write = (gr[REG_ERR] & 2) != 0;
    uintptr_t addr = (uintptr_t)si->si_addr;
    const char *why = sig == SIGBUS ? "a mapped file's page past its end"
                    : addr >= MC_SHADOW_OFFSET && addr < MC_SHADOW_END ? "memtrace's shadow memory"
                    : si->si_code == SEGV_MAPERR ? "unmapped memory"
                    : si->si_code == SEGV_ACCERR ? (write ? "memory that may not be written" : "memory that may not be read")
                    : "a non-canonical address";
    uintptr_t ip = (uintptr_t)gr[REG_RIP], site = ip;
    int known = si->si_code != SI_KERNEL;
    size_t size = 0;
    if (check_fault(ip, gr, &addr, &size, &write, &site)) known = 1;
    else if (shadow_load((const unsigned char *)ip)) size = 0; /* a --check build's inline check: the access is not known */
    else size = operand_bytes((const unsigned char *)ip), site = moved_from(ip);
    /* the faulting instruction's own address, not a return address: its line is the table's at it */
    mc_site_insn = 1;
    mc_site_rbp = (uintptr_t)gr[REG_RBP];
    mc_report_segv(addr, known, size, write ? MC_WRITE : MC_READ, (const void *)site, why);
    mc_site_insn = 0;
}

static void catch_faults(void)
{
    static const int sigs[] = {SIGSEGV, SIGBUS};
    for (int i = 0; i < 2; i++) {
        int sig = sigs[i];
        struct sigaction old;
        if (sigaction(sig, NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) continue;
        struct sigaction a = {.sa_sigaction = on_fault, .sa_flags = SA_SIGINFO | SA_NODEFER};
        sigemptyset(&a.sa_mask);
        sigaction(sig, &a, NULL);
    }
}

/* The executable's image [exe_lo, exe_hi), from its program headers (the auxiliary vector: no loader lock), where no
 * heap block can be: the index test below needs no walk back over a global's shadow for an address there. */
static uintptr_t exe_lo, exe_hi;

static void note_executable(void)
{
    const Elf64_Phdr *ph = (const Elf64_Phdr *)getauxval(AT_PHDR);
    unsigned long n = getauxval(AT_PHNUM);
    uintptr_t bias = 0, lo = UINTPTR_MAX, hi = 0;
    if (!ph) return;
    for (unsigned long i = 0; i < n; i++)
        if (ph[i].p_type == PT_PHDR) bias = (uintptr_t)ph - ph[i].p_vaddr;
    for (unsigned long i = 0; i < n; i++) {
        if (ph[i].p_type != PT_LOAD) continue;
        if (bias + ph[i].p_vaddr < lo) lo = bias + ph[i].p_vaddr;
        if (bias + ph[i].p_vaddr + ph[i].p_memsz > hi) hi = bias + ph[i].p_vaddr + ph[i].p_memsz;
    }
    if (lo < hi) exe_lo = lo, exe_hi = hi;
}

void mc_init(void)
{
    if (shadow_ready) return;
    void *want = (void *)MC_SHADOW_OFFSET;
    void *got = mmap(want, MC_SHADOW_END - MC_SHADOW_OFFSET, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (got == want) mt_own_add(got, MC_SHADOW_END - MC_SHADOW_OFFSET);
    if (got != want) {
        static const char msg[] = "memtrace: check: cannot map the shadow memory at 0x7fff8000 (another mapping is "
                                  "there, or the address space is limited); the program cannot run checked\n";
        (void)!write(2, msg, sizeof msg - 1);
        _exit(1);
    }
    shadow_ready = 1;
    note_executable();
    mc_poison(0, 1u << 16, MC_NULL_PAGE);
    pthread_key_create(&counts_key, thread_ended);
    if (!tc.registered) register_thread(); /* the main thread, whose counts are read at exit */
    mc_init_report();
    catch_faults();
}

__attribute__((constructor(101))) static void mc_constructor(void) { mc_init(); }

/* For the rewrite runtime (rt_init): linked -z initfirst, it applies plans whose trampolines test the shadow
 * before this library's constructor runs, so it maps the shadow first through this entry. */
MC_EXPORT void __memtrace_check_init(void)
{
    mc_init();
    /* the trampolines' slot, in the null page's shadow: only a rewrite run calls through it. In a --check build
     * its bytes (a code address, random under ASLR) read as shadow values: a byte 0xfa there made the compiled
     * index test take an integer near 0xffc0 for a heap block's start and read its header at address 0xff80
     * (gzip: a wild access in send_bits, one run in 16 with a runtime whose address had 0xfa in it) */
    mc_rw_init();
    mc_stackvars_init(); /* run --check's stack variables (check_stackvars.c): only a rewrite run has them */
    mc_symglobals_init(); /* and its globals' padding as redzones (check_symglobals.c) */
}

int mc_addressable_range(uintptr_t addr) { return mc_shadow_in_range(addr); }

/* n shadow bytes of value: a block's redzones are a few shadow bytes, which a word loop writes faster than a
 * call of the exported memset (the checked one: it tests the shadow's own shadow first). Measured on
 * bench/programs/heap.c: the two memset calls per redzone were 7 % of the checked run. */
static void shadow_fill(uint8_t *s, uint8_t value, size_t n)
{
    if (n > 256 && value == 0) {
        /* clearing a large range (a global's registration: gemm's 6 MB of matrices) stores only where it is
         * not 0 already: the shadow of memory no one poisoned was never written, and reading it maps the zero
         * page where a store would fault in fresh pages (memset was 2.7 % of gemm's checked run) */
        for (; n && ((uintptr_t)s & 7); n--, s++) if (*s) *s = 0;
        for (; n >= 8; n -= 8, s += 8) if (*(uint64_t *)s) *(uint64_t *)s = 0;
        for (; n; n--, s++) if (*s) *s = 0;
        return;
    }
    if (n > 256) { memset(s, value, n); return; }
    uint64_t w = value * 0x0101010101010101ULL;
    for (; n >= 8; n -= 8, s += 8) __builtin_memcpy(s, &w, 8);
    for (; n; n--) *s++ = value;
}

void mc_poison(uintptr_t addr, size_t size, uint8_t value)
{
    shadow_fill(MC_SHADOW(addr), value, (size + 7) >> 3);
}

void mc_unpoison(uintptr_t addr, size_t size)
{
    shadow_fill(MC_SHADOW(addr), 0, size >> 3);
    if (size & 7) *MC_SHADOW(addr + (size & ~(size_t)7)) = (uint8_t)(size & 7);
}

/* The first byte of [addr, addr+size) that may not be touched, or 0 when all may (check_block.h). */
__attribute__((target("general-regs-only")))
uintptr_t mc_first_bad(uintptr_t addr, size_t size) { return mc_shadow_first_bad(addr, size); }

/* A single-granule access is fine when its shadow is 0 or covers its last byte. */
#define CHECK(name, size, access) CHECK_COUNTED(name, size, access, 1)
#define CHECK_COUNTED(name, size, access, count)                                               \
    MC_EXPORT void name(uintptr_t a)                                                           \
    {                                                                                          \
        if (__builtin_expect(!tc.registered, 0)) register_thread();                            \
        tc.c.checks += count;                                                                  \
        tc.c.accesses += count;                                                                \
        if ((size) <= 8 && (a & 7) + (size) <= 8) {                                            \
            uint8_t v = *MC_SHADOW(a);                                                         \
            if (__builtin_expect(v == 0, 1) || (v < 0x80 && (a & 7) + (size) <= v)) return;    \
        } else if (mc_first_bad(a, (size)) == 0) {                                             \
            return;                                                                            \
        }                                                                                      \
        if (!(count)) tc.rest = rest_of_run(__builtin_return_address(0));                      \
        mc_report_access(a, (size), access, __builtin_return_address(0), NULL);                \
        tc.rest = 0;                                                                           \
    }
CHECK(__asan_load1, 1, MC_READ)
CHECK(__asan_load2, 2, MC_READ)
CHECK(__asan_load4, 4, MC_READ)
CHECK(__asan_load8, 8, MC_READ)
CHECK(__asan_load16, 16, MC_READ)
CHECK(__asan_store1, 1, MC_WRITE)
CHECK(__asan_store2, 2, MC_WRITE)
CHECK(__asan_store4, 4, MC_WRITE)
CHECK(__asan_store8, 8, MC_WRITE)
CHECK(__asan_store16, 16, MC_WRITE)
CHECK(__asan_load1_noabort, 1, MC_READ)
CHECK(__asan_load2_noabort, 2, MC_READ)
CHECK(__asan_load4_noabort, 4, MC_READ)
CHECK(__asan_load8_noabort, 8, MC_READ)
CHECK(__asan_load16_noabort, 16, MC_READ)
CHECK(__asan_store1_noabort, 1, MC_WRITE)
CHECK(__asan_store2_noabort, 2, MC_WRITE)
CHECK(__asan_store4_noabort, 4, MC_WRITE)
CHECK(__asan_store8_noabort, 8, MC_WRITE)
CHECK(__asan_store16_noabort, 16, MC_WRITE)
/* the slow paths of inlined checks, which counted themselves (__memtrace_check_inline) */
CHECK_COUNTED(__memtrace_slow_load1, 1, MC_READ, 0)
CHECK_COUNTED(__memtrace_slow_load2, 2, MC_READ, 0)
CHECK_COUNTED(__memtrace_slow_load4, 4, MC_READ, 0)
CHECK_COUNTED(__memtrace_slow_load8, 8, MC_READ, 0)
CHECK_COUNTED(__memtrace_slow_store1, 1, MC_WRITE, 0)
CHECK_COUNTED(__memtrace_slow_store2, 2, MC_WRITE, 0)
CHECK_COUNTED(__memtrace_slow_store4, 4, MC_WRITE, 0)
CHECK_COUNTED(__memtrace_slow_store8, 8, MC_WRITE, 0)

/* gcc's inline instrumentation (-fsanitize=address at its default call threshold) tests the shadow itself and
 * calls these only when its test failed: __asan_report_{load,store}{1,2,4,8,16}(addr) and _n(addr, size) do not
 * return (gcc keeps nothing live across them), so they report even when the exact test here finds every byte
 * addressable (a silent stop would hide why) and then stop the program, also in continue mode; the _noabort
 * forms (-fsanitize-recover=address) report only what the exact test finds and return. Each counts as one
 * executed check (gcc's passing inline tests are not counted: no as step counts them yet). The return address
 * is in gcc's report block, which carries the access's line. Not used by `memtrace cc --check` yet (its checks
 * are calls): docs/check.md, "gcc's inline checks"; CheckInlineReportTest. */
static inline __attribute__((always_inline)) void report_entry(uintptr_t a, size_t size, enum mc_access access,
                                                                int noreturn, const void *pc)
{
    if (__builtin_expect(!tc.registered, 0)) register_thread();
    tc.c.checks++;
    tc.c.accesses++;
    if (noreturn || mc_first_bad(a, size) != 0) mc_report_access(a, size, access, pc, NULL);
    if (noreturn) mc_stop();
}
#define REPORT_AT(name, size, access, noreturn) \
    MC_EXPORT void name(uintptr_t a) { report_entry(a, (size), access, (noreturn), __builtin_return_address(0)); }
#define REPORT_N(name, access, noreturn) \
    MC_EXPORT void name(uintptr_t a, size_t size) { report_entry(a, size, access, (noreturn), __builtin_return_address(0)); }
REPORT_AT(__asan_report_load1, 1, MC_READ, 1)
REPORT_AT(__asan_report_load2, 2, MC_READ, 1)
REPORT_AT(__asan_report_load4, 4, MC_READ, 1)
REPORT_AT(__asan_report_load8, 8, MC_READ, 1)
REPORT_AT(__asan_report_load16, 16, MC_READ, 1)
REPORT_AT(__asan_report_store1, 1, MC_WRITE, 1)
REPORT_AT(__asan_report_store2, 2, MC_WRITE, 1)
REPORT_AT(__asan_report_store4, 4, MC_WRITE, 1)
REPORT_AT(__asan_report_store8, 8, MC_WRITE, 1)
REPORT_AT(__asan_report_store16, 16, MC_WRITE, 1)
REPORT_AT(__asan_report_load1_noabort, 1, MC_READ, 0)
REPORT_AT(__asan_report_load2_noabort, 2, MC_READ, 0)
REPORT_AT(__asan_report_load4_noabort, 4, MC_READ, 0)
REPORT_AT(__asan_report_load8_noabort, 8, MC_READ, 0)
REPORT_AT(__asan_report_load16_noabort, 16, MC_READ, 0)
REPORT_AT(__asan_report_store1_noabort, 1, MC_WRITE, 0)
REPORT_AT(__asan_report_store2_noabort, 2, MC_WRITE, 0)
REPORT_AT(__asan_report_store4_noabort, 4, MC_WRITE, 0)
REPORT_AT(__asan_report_store8_noabort, 8, MC_WRITE, 0)
REPORT_AT(__asan_report_store16_noabort, 16, MC_WRITE, 0)
REPORT_N(__asan_report_load_n, MC_READ, 1)
REPORT_N(__asan_report_store_n, MC_WRITE, 1)
REPORT_N(__asan_report_load_n_noabort, MC_READ, 0)
REPORT_N(__asan_report_store_n_noabort, MC_WRITE, 0)

/* Spindle's object-level test of a single indexed access: every byte of p[i] is addressable, but i may have
 * carried it over p's right redzone and the next chunk's left one into another live block. The block of the
 * base (found at most 4 KB back: a base is mostly a block's start, found at once) must hold the access; a base
 * in no live heap block (a global, the stack, a block's far inside) is not tested. The rewriter tests a base
 * that starts a live block inline and calls this only when that test fails (or a base was not one). */
/* The rewriter's inline fast path of this test reads a block's header at fixed offsets from its start
 * (CheckRewriter.liveBlockHolds): */
_Static_assert(sizeof(struct mc_block) == 64 && offsetof(struct mc_block, magic) == 0 && offsetof(struct mc_block, size) == 8,
               "CheckRewriter.liveBlockHolds reads magic at -64 and size at -56 from a block's start");

/* The live block holding p for the index test, or NULL; none in the executable's image (its globals): gzip's
 * `outbuf[outcnt++]` (an either base) walked 4 KB of outbuf's shadow back per byte written, 32 % of its run. */
static const struct mc_block *index_block(uintptr_t p)
{
    return p >= exe_lo && p < exe_hi ? NULL : mc_live_block(p, 1u << 12);
}

MC_EXPORT void __memtrace_check_index(uintptr_t a, uintptr_t base, uint64_t packed)
{
    if (__builtin_expect(!tc.registered, 0)) register_thread();
    size_t size = packed & 0xff;
    const struct mc_block *b = index_block(base);
    if (!b && (packed >> 9 & 1)) b = index_block(a - base);
    if (!b) return;
    uintptr_t start = (uintptr_t)(b + 1);
    if (a >= start && a + size <= start + b->size) return;
    tc.rest = rest_of_run(__builtin_return_address(0));
    mc_report_into(b, a, size, packed >> 8 & 1 ? MC_WRITE : MC_READ, __builtin_return_address(0), NULL);
    tc.rest = 0;
}

/* A range: gcc's check of an odd-sized access. */
#define CHECK_N(name, access)                                                                  \
    MC_EXPORT void name(uintptr_t a, size_t size)                                              \
    {                                                                                          \
        if (__builtin_expect(!tc.registered, 0)) register_thread();                            \
        tc.c.checks++;                                                                         \
        tc.c.accesses++;                                                                       \
        if (__builtin_expect(!size || mc_shadow_clean(a, size) || !mc_first_bad(a, size), 1)) return; \
        mc_report_access(a, size, access, __builtin_return_address(0), NULL);                  \
    }
CHECK_N(__asan_loadN, MC_READ)
CHECK_N(__asan_storeN, MC_WRITE)
CHECK_N(__asan_loadN_noabort, MC_READ)
CHECK_N(__asan_storeN_noabort, MC_WRITE)

/* memtrace's one check for a block's accesses from one base: desc = {count, span, then per access
 * {offset from base, size | store << 8}}. The span [base, base+span) all addressable is the common case;
 * otherwise each access is checked exactly, so that a span over bytes no access touches reports nothing.
 * The group counted itself (__memtrace_check_grouped); a span up to 57 bytes comes here only when its shadow
 * is not all 0. */
struct group { uint32_t count, span; struct { int32_t offset; uint32_t size; } access[]; };

MC_EXPORT void __memtrace_slow_group(uintptr_t base, const struct group *g)
{
    if (__builtin_expect(!tc.registered, 0)) register_thread();
    /* a span of up to 8 granules whose shadow is all 0, tested here: mc_first_bad is a call (its target
     * attribute keeps it out of line), 4 % of bench/programs/heap.c's checked run besides this function's 7 % */
    if (g->span) {
        const uint8_t *s = MC_SHADOW(base), *e = MC_SHADOW(base + g->span - 1);
        if (e - s < 8) {
            uint8_t any = 0;
            for (const uint8_t *p = s; p <= e; p++) any |= *p;
            if (__builtin_expect(any == 0, 1)) return;
        }
    }
    if (__builtin_expect(mc_first_bad(base, g->span) == 0, 1)) return;
    for (uint32_t i = 0; i < g->count; i++) {
        uintptr_t a = base + g->access[i].offset;
        size_t size = g->access[i].size & 0xff;
        if (mc_first_bad(a, size))
            mc_report_access(a, size, g->access[i].size >> 8 ? MC_WRITE : MC_READ, __builtin_return_address(0), NULL);
    }
}

/* Past this stride (bytes) a loop check tests each access's bytes instead of the whole range: one shadow
 * word covers 64 bytes, so a range of a 2 KB column walk would read 32 words per access. */
#define MC_STRIDED 64

/* Rows (bit 10 of packed): a column walk moved out of the loop that walks its rows, each access widened to
 * width bytes (%rcx): from lo to hi step by step, [a, a + width) each; one range when the rows touch. */
#define MC_ROWS (1u << 10)

/* The first bad byte of the rows from lo to hi (their starts), or 0. */
__attribute__((target("general-regs-only")))
static uintptr_t mc_rows_first_bad(uintptr_t lo, uintptr_t hi, uint64_t step, uint64_t width)
{
    if (width >= step) return mc_first_bad(lo, hi - lo + width);
    for (uintptr_t a = lo; a <= hi; a += step) {
        uintptr_t bad = mc_first_bad(a, width);
        if (bad) return bad;
    }
    return 0;
}

/* Spindle's object-level check of a loop whose accesses skip the bytes between them (a stride over 64 bytes,
 * rows apart): every access may be addressable while the walk stepped over a redzone into the next block.
 * Its accesses [lo, hi) must stay in the live block its first access is in (the object the pointer came
 * from); that block when they do not, else NULL. A first access outside any live heap block (a global, the
 * stack, deep in a block past the lookup's 64 KB) is not checked this way. */
static const struct mc_block *mc_escapes(uintptr_t first, uintptr_t lo, uintptr_t hi)
{
    const struct mc_block *b = mc_live_block(first, 1u << 16);
    if (!b) return NULL;
    uintptr_t start = (uintptr_t)(b + 1);
    return lo >= start && hi <= start + b->size ? NULL : b;
}

/* The loop check, called by the stub below with every register saved: [min(first,last), max+size). */
__attribute__((target("general-regs-only"), used))
static int mc_loop_check(uintptr_t first, uintptr_t last, uint64_t packed, uint64_t width)
{
    /* a thread's first check registers it in the slow path, where the vector registers are saved: the code
     * around a check in an unchecked body (vectorised loops) keeps values in them */
    if (__builtin_expect(!tc.registered, 0)) return 1;
    uint64_t size = packed & 0xff, step = packed >> 16;
    uintptr_t lo = first < last ? first : last, hi = (first < last ? last : first) + size;
    tc.c.checks++;
    tc.c.loop_checks++;
    if (packed & MC_ROWS) {
        uint64_t rows = step ? (hi - size - lo) / step + 1 : 1;
        tc.c.accesses += rows * (size ? (width + size - 1) / size : 1);
        if (!step) return 0;
        if (mc_rows_first_bad(lo, hi - size, step, width)) return 1;
        return width < step && step > MC_STRIDED && mc_escapes(first, lo, hi - size + width) != NULL;
    }
    tc.c.accesses += step ? (hi - size - lo) / step + 1 : 1;
    if (step > MC_STRIDED && step > size) {        /* a column walk: its accesses, not the gaps between them */
        for (uintptr_t a = lo; a + size <= hi; a += step)
            if (mc_first_bad(a, size)) return 1;
        return !((packed >> 9) & 1) && mc_escapes(first, lo, hi) != NULL;
    }
    return mc_first_bad(lo, hi - lo) != 0;
}

__attribute__((used))
static void mc_loop_report(uintptr_t first, uintptr_t last, uint64_t packed, const void *pc, uint64_t width)
{
    if (!tc.registered) {
        register_thread();
        if (!mc_loop_check(first, last, packed, width)) return;
    }
    if ((packed >> 9) & 1) {                      /* one access outside a loop (an unchecked body's) */
        mc_report_access(first, packed & 0xff, (packed >> 8) & 1 ? MC_WRITE : MC_READ, pc, NULL);
        return;
    }
    uint64_t size = packed & 0xff;
    uintptr_t lo = first < last ? first : last, hi = (first < last ? last : first) + size;
    uint64_t step = packed >> 16;
    uint64_t each = packed & MC_ROWS ? width : size;
    if (step > MC_STRIDED && step > each && step && !mc_rows_first_bad(lo, hi - size, step, each)) {
        /* every access addressable: the walk left its first access's block for another object */
        const struct mc_block *b = mc_escapes(first, lo, hi - size + each);
        if (!b) return;
        uintptr_t start = (uintptr_t)(b + 1), a = first;
        while (a >= start && a + each <= start + b->size) a = first < last ? a + step : a - step;
        mc_report_into(b, a, each, (packed >> 8) & 1 ? MC_WRITE : MC_READ, pc, "the loop");
        return;
    }
    if (packed & MC_ROWS) {                        /* the first bad row's bad part, by the loop */
        uintptr_t a = lo;
        while (a + step <= hi - size && !mc_first_bad(a, width)) a += step;
        lo = a;
        hi = a + width;
    } else if (step > MC_STRIDED && step > size) { /* the first access that is bad, as one access */
        uintptr_t a = lo;
        while (a + size < hi && !mc_first_bad(a, size)) a += step;
        lo = a;
        hi = a + size;
    }
    uintptr_t bad = mc_first_bad(lo, hi - lo);
    /* the loop's bad part: from the first bad byte to the range's end, or, when the range starts bad (an
     * underflow), from its start to the first byte that may be touched */
    uintptr_t span_lo = bad, span_hi = hi;
    if (bad == lo) {
        span_hi = lo;
        while (span_hi < hi && span_hi - lo < (1u << 20) && mc_first_bad(span_hi, 1) == span_hi) span_hi++;
    }
    mc_report_loop(bad, size, (packed >> 8) & 1 ? MC_WRITE : MC_READ, pc, span_lo, span_hi);
}

/* __memtrace_check_loop(rdi first, rsi last, rdx packed): preserves every register and the flags, since
 * it is called where the compiler did not plan a call; the vector state is saved only to report. */
__asm__(
    ".text\n"
    ".globl __memtrace_check_loop\n"
    ".type __memtrace_check_loop, @function\n"
    "__memtrace_check_loop:\n"
    "    pushfq\n"
    "    push %rax\n push %rcx\n push %rdx\n push %rsi\n push %rdi\n"
    "    push %r8\n push %r9\n push %r10\n push %r11\n push %rbp\n"
    "    mov %rsp, %rbp\n"
    "    and $-16, %rsp\n"
    "    call mc_loop_check\n"
    "    test %eax, %eax\n"
    "    jz 1f\n"
    "    sub $512, %rsp\n"
    "    fxsave (%rsp)\n"
    "    mov 40(%rbp), %rdi\n"          /* the saved arguments: rdi, rsi, rdx */
    "    mov 48(%rbp), %rsi\n"
    "    mov 56(%rbp), %rdx\n"
    "    mov 88(%rbp), %rcx\n"          /* the return address: the loop's entry */
    "    mov 64(%rbp), %r8\n"           /* the saved %rcx: rows' width */
    "    call mc_loop_report\n"
    "    fxrstor (%rsp)\n"
    "1:  mov %rbp, %rsp\n"
    "    pop %rbp\n pop %r11\n pop %r10\n pop %r9\n pop %r8\n"
    "    pop %rdi\n pop %rsi\n pop %rdx\n pop %rcx\n pop %rax\n"
    "    popfq\n"
    "    ret\n"
    ".size __memtrace_check_loop, .-__memtrace_check_loop\n");

/* gcc's module constructor calls these first. */
MC_EXPORT void __asan_init(void) { mc_init(); }
MC_EXPORT void __asan_version_mismatch_check_v8(void) {}
MC_EXPORT void __asan_before_dynamic_init(const char *module) {}
MC_EXPORT void __asan_after_dynamic_init(void) {}


/* The module's descriptor array itself (gcc puts it in .data, after the module's globals, where the next
 * module's first global follows it; the program never touches it) is poisoned as a global redzone too, as
 * ASan's build has it: so a read just before the next module's first global (level_table[-1]) is that
 * global's underflow (check_objects.c names the nearest global above), where no redzone used to be. */
MC_EXPORT void __asan_register_globals(struct asan_global *g, size_t n)
{
    mc_init();
    for (size_t i = 0; i < n; i++) {
        mc_unpoison(g[i].beg, g[i].size);
        uintptr_t rz = (g[i].beg + g[i].size + 7) & ~(uintptr_t)7;
        mc_poison(rz, g[i].beg + g[i].size_with_redzone - rz, MC_GLOBAL_RZ);
        mc_note_global(&g[i]);
    }
    uintptr_t a = (uintptr_t)g;
    if (n && !(a & 7) && mc_shadow_in_range(a)) mc_poison(a, n * sizeof *g, MC_GLOBAL_RZ);
}

/* The 32 bytes the as step puts at the start of an object's .bss, .data and .rodata (GlobalGuards.java): a
 * global redzone before the object's first global, which gcc leaves without one. */
MC_EXPORT void __memtrace_check_guards(uintptr_t bss, uintptr_t data, uintptr_t rodata)
{
    mc_init();
    uintptr_t guard[3] = {bss, data, rodata};
    for (int i = 0; i < 3; i++)
        if (!(guard[i] & 7) && mc_shadow_in_range(guard[i])) mc_poison(guard[i], 32, MC_GLOBAL_RZ);
}

MC_EXPORT void __asan_unregister_globals(struct asan_global *g, size_t n)
{
    for (size_t i = 0; i < n; i++) mc_unpoison(g[i].beg, g[i].size_with_redzone);
    if (n && !((uintptr_t)g & 7)) mc_unpoison((uintptr_t)g, n * sizeof *g);
    mc_forget_globals(g, n);
}

/* Before a call that does not return (exit, longjmp, throw): the frames it will skip (from here up to the
 * frame that catches or set the jump) keep their redzones' shadow, which would poison the frames that reuse
 * that stack and are not checked (libstdc++'s): clear the thread's stack from here up to its top. The live
 * callers' redzones go too (a throw forgets them). */
MC_EXPORT void __asan_handle_no_return(void)
{
    pthread_attr_t attr;
    void *base;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
    int ok = pthread_attr_getstack(&attr, &base, &size) == 0;
    pthread_attr_destroy(&attr);
    if (!ok) return;
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0) & ~(uintptr_t)7, top = (uintptr_t)base + size;
    if (sp > (uintptr_t)base && sp < top && top - sp < ((size_t)1 << 30)) memset(MC_SHADOW(sp), 0, (top - sp) >> 3);
}

MC_EXPORT void __asan_poison_stack_memory(uintptr_t addr, size_t size) { mc_poison(addr, size, MC_STACK_SCOPE); }
MC_EXPORT void __asan_unpoison_stack_memory(uintptr_t addr, size_t size) { mc_unpoison(addr, size); }

/* gcc's alloca layout: a 32-byte left redzone, the object, its partial redzone up to a 32-byte boundary and
 * 32 bytes more (gcc's handle_builtin_alloca reserves them). Without those 32, an alloca or VLA whose size is a
 * multiple of 32 had no right redzone at all: a write one past its end went unseen and the report's size scan
 * ran on into the frame ("an alloca of 67108864 bytes"). */
MC_EXPORT void __asan_alloca_poison(uintptr_t addr, size_t size)
{
    uintptr_t left = addr - 32, end = addr + size, right_end = ((end + 31) & ~(uintptr_t)31) + 32;
    mc_poison(left, 32, MC_ALLOCA_LEFT);
    mc_unpoison(addr, size);
    uintptr_t r = (end + 7) & ~(uintptr_t)7;
    mc_poison(r, right_end - r, MC_ALLOCA_RIGHT);
}

MC_EXPORT void __asan_allocas_unpoison(uintptr_t top, uintptr_t bottom)
{
    if (top && bottom > top) memset(MC_SHADOW(top), 0, (bottom - top) >> 3);
}
