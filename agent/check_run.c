/*
 * check_run.c: `memtrace run --check` (docs/check.md, "memtrace run --check"): the heap checks of
 * `memtrace cc --check` on a program nobody rebuilt, inside the fault-mode agent. Turned on by bit
 * CHECK_REGION_BIT of MEMTRACE_REGIONS (memtrace run --check sets it, with the heap as the only traced region).
 *
 * The blocks have the compiled-in checker's layout, on heap.c's memory: [left redzone whose last 64 bytes are
 * the header (struct mc_block, check/check.h) | the requested bytes | right redzone of 32 bytes to 2 KB], and
 * the same shadow memory ((addr >> 3) + 0x7fff8000, mapped here as the compiled-in runtime maps it), so that
 * the checker's report files (check/check_report.h), linked into the agent unchanged, name blocks and word
 * reports exactly as they do
 * there. The agent writes headers and shadow through heap.c's alias view (the program's view is protected).
 * The block logic itself (layout, live list, quarantine, leak scan, shadow test) is check/check_block.h's,
 * shared with the compiled-in runtime; what is here is the agent's memory, locks and entry points.
 *
 * Where the checks are: every access of the program to the heap faults (the heap is traced), and the fault
 * handler (fault.c) asks check_fault() first: the faulting operand (its address and size from the decoded
 * instruction when the agent knows it, else the faulting byte) against the shadow. A `rep movs`/`rep stos`
 * (gcc's inline memcpy and memset at -O2) is checked over the whole ranges it has left when it faults (%rcx
 * elements from %rsi and %rdi, downwards with DF set), as one access. The executable's .data and .bss are
 * traced too, and their faults checked against its symbols' extents (check_globals.c: global overflows).
 * malloc & co. and C++'s operators new and delete (wrappers.c and below) lay out, check and release blocks: a
 * released block is poisoned and waits in a FIFO quarantine (MEMTRACE_CHECK_QUARANTINE bytes, default 64 MB)
 * before heap.c gets it back. memcpy, memmove and memset of the program are checked by their whole ranges
 * (wrappers.c), on the heap and in the executable's globals. At exit, leaks by reachability as the compiled-in
 * checker finds them (roots: writable segments of every module, the exiting thread's stack). A SIGSEGV or
 * SIGBUS that is about to kill the program (fault.c's forward, check_segv) is said before it does: a ret that
 * faults on an overwritten return address as a stack smash of its function's frame (a stack overflow, the
 * function named by the executable's .symtab), an address in the first 64 KB as a null dereference, any other
 * as a wild access with why the kernel refused it; the program then dies of the signal as natively. A report
 * opens all traced memory for its duration (report code reads headers and flushes the program's stdout, both
 * on the heap), then closes it again in continue mode.
 *
 * What it gets wrong: reads by libc's own code (strlen, strcpy's vector loads read past a string's end by
 * design) are checked only for use after free, so strcpy reading past a block is missed (its writes are
 * checked); the kernel's accesses are not checked but the writes of read, pread64, recvfrom, readv, preadv, recvmsg; an overflow that lands inside
 * another live block is not seen (as with redzones anywhere); a block freed out of quarantine and handed out
 * again is the new block; blocks glibc served (the heap's reservation full, a forked child) are unchecked;
 * code is named by dynamic symbols or module+offset (an unmodified binary has no call-site table); registers of
 * threads other than the exiting one are not leak roots (their stacks are, as anonymous memory); a stack overflow is seen when it smashed a return
 * address and the ret faults on it, or, in an executable with DWARF and frame pointers, when memcpy & co. or a
 * wrapped string function's range leaves its stack variable (check_locals.c); a direct store past a local that
 * stays inside its frame, or writes a canonical mapped address there, is missed.
 */
#include <stdio.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "agent.h"
#include "check/check.h"
#include "check/check_block.h"

#define LEFT 64

struct check_state chk;

static struct {
    spinlock lock;               /* the lists; a leaf: touches only the alias view */
    struct mc_lists l;           /* the live list, the quarantine: program addresses, linked through the alias view */
    uintptr_t libc_s, libc_e;    /* libc's code: its reads are checked for use after free only */
    volatile uint64_t accesses;  /* heap accesses checked */
    volatile uint64_t libc_checks;
} cs = {.l.q_limit = 64u << 20};

void mc_set_quarantine(size_t bytes) { cs.l.q_limit = bytes; }
void mc_init_report(void);

/* the report files format their messages through these: in libmemtrace-check.so they reach libc's vsnprintf past */
/* the checked printf wrappers (check_format.c); the agent wraps no printf, so libc's serves directly. */
int mc_vsnprintf(char *d, size_t n, const char *fmt, va_list ap) { return vsnprintf(d, n, fmt, ap); }
int mc_snprintf(char *d, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(d, n, fmt, ap);
    va_end(ap);
    return k;
}

static struct mc_block *A(const struct mc_block *b) { return heap_alias(b); }

/* --stack-depth N > 1: the frames a report prints under its line (check_stacks.c's mc_frames): when a fault */
/* is being checked (check_fault_gr, this thread's), unwound from the faulting instruction's registers by     */
/* each module's .eh_frame (mt_unwind, as fault mode's access stacks: docs/stacks.md, "Access stacks"), so    */
/* code without frame pointers (libc's strcpy, -O2 programs) shows every caller; else above the wrapper's    */
/* caller pc, as allocation stacks are found (mt_frames_above). The stack read is the thread's own, bounded  */
/* as mt_unwind bounds it: a smashed frame ends the walk, never faults. It ends at main.                      */
__thread const greg_t *check_fault_gr __attribute__((tls_model("initial-exec")));
static int is_main(const char *fn) { return fn && fn[0] == 'm' && fn[1] == 'a' && fn[2] == 'i' && fn[3] == 'n' && !fn[4]; }
static int frames_of(uintptr_t pc, uint64_t *buf)
{
    if (g.stack_depth <= 1) return 0;
    int max = g.stack_depth - 1 < MT_STACK_MAX - 1 ? g.stack_depth - 1 : MT_STACK_MAX - 1, n = 0;
    if (!check_fault_gr) {
        n = mt_frames_above((uintptr_t)__builtin_frame_address(0), pc, g.stack_depth, buf);
    } else {
        uintptr_t sp = (uintptr_t)check_fault_gr[REG_RSP], tp, end = (uintptr_t)__libc_stack_end, hi = 0;
        __asm__("mov %%fs:0, %0" : "=r"(tp));
        if (end > sp && end - sp < (1UL << 30)) hi = end;
        else if (tp > sp && tp - sp < (1UL << 30)) hi = tp;
        /* the instruction's own row: mt_unwind looks a return address up one byte before it */
        if (hi) n = mt_unwind((uintptr_t)check_fault_gr[REG_RIP] + 1, sp, (uintptr_t)check_fault_gr[REG_RBP], sp, hi, buf, max);
    }
    /* frames the walk found by .eh_frame carry MT_FRAME_CFI (for the trace's reader): a report wants addresses; */
    /* the stack ends at main, as memtrace's allocation stacks and valgrind's do (libc's start-up is no caller)    */
    if (is_main(check_function_of(check_fault_gr ? pc : pc - 1))) return 0;
    for (int i = 0; i < n; i++) {
        buf[i] &= ~MT_FRAME_CFI;
        if (is_main(check_function_of(buf[i] - 1))) return i + 1;
    }
    return n;
}
#define WITH_FRAMES(pc, call) do { uint64_t fr_[MT_STACK_MAX]; mc_nframes = frames_of(pc, fr_); mc_frames = fr_; \
                                     mc_frame0_return = !check_fault_gr; call; mc_nframes = 0; } while (0)

/* ---- shadow ---- */

int mc_addressable_range(uintptr_t addr) { return mc_shadow_in_range(addr); }

void mc_poison(uintptr_t addr, size_t size, uint8_t value)
{
    uint8_t *s = MC_SHADOW(addr);
    for (size_t i = 0; i < (size + 7) >> 3; i++) s[i] = value;
}

void mc_unpoison(uintptr_t addr, size_t size)
{
    uint8_t *s = MC_SHADOW(addr);
    for (size_t i = 0; i < size >> 3; i++) s[i] = 0;
    if (size & 7) s[size >> 3] = (uint8_t)(size & 7);
}

uintptr_t mc_first_bad(uintptr_t addr, size_t size) { return mc_shadow_first_bad(addr, size); }

void mc_counts_total(struct mc_counts *out)
{
    *out = (struct mc_counts){.checks = cs.accesses + cs.libc_checks, .accesses = cs.accesses, .libc_checks = cs.libc_checks};
}
void mc_count_libc(const void *pc) { count(&cs.libc_checks); } /* the agent's own calls never get here (FROM_AGENT) */
void mc_counts_stopped(void) {} /* counts each access as it is checked: nothing was counted ahead */

static int libc_text(struct dl_phdr_info *info, size_t size, void *arg)
{
    uintptr_t want = (uintptr_t)arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        uintptr_t s = info->dlpi_addr + ph->p_vaddr, e = s + ph->p_memsz;
        if (want >= s && want < e) {
            cs.libc_s = s;
            cs.libc_e = e;
            return 1;
        }
    }
    return 0;
}

/* After heap_init: the shadow, the options (check_outcome.c), libc's extent. Without a heap of our own    */
/* nothing can be checked: said once, and the run goes on unchecked.                                       */
void check_init(int regions)
{
    if (!(regions & CHECK_REGION_BIT)) return;
    if (!heap_serves()) {
        static const char msg[] = "memtrace: check: the agent's heap could not be reserved; the run is not checked\n";
        mt_sys3(SYS_write, 2, (long)msg, sizeof msg - 1);
        return;
    }
    long got = mt_sys6(SYS_mmap, (long)MC_SHADOW_OFFSET, (long)(MC_SHADOW_END - MC_SHADOW_OFFSET), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (got == (long)MC_SHADOW_OFFSET) mt_own_add((void *)got, MC_SHADOW_END - MC_SHADOW_OFFSET);
    if (got != (long)MC_SHADOW_OFFSET) {
        static const char msg[] = "memtrace: check: cannot map the shadow memory at 0x7fff8000 (another mapping is "
                                  "there, or the address space is limited); the program cannot run checked\n";
        mt_sys3(SYS_write, 2, (long)msg, sizeof msg - 1);
        _exit(2);
    }
    mt_sys3(SYS_mprotect, (long)MC_SHADOW_GAP_START, (long)(MC_SHADOW_GAP_END - MC_SHADOW_GAP_START), PROT_NONE);
    dl_iterate_phdr(libc_text, (void *)(uintptr_t)real.malloc);
    chk.on = 1;
    check_globals_init();
    check_locals_init();
    mc_init_report();
}

/* ---- reports: all traced memory open while the report files work ---- */

static void world(int open)
{
    enter_critical();
    spin_lock(&g.lock);
    if (open) open_all_locked(); else close_all_locked();
    spin_unlock(&g.lock);
    leave_critical();
}

/* A program that closed its standard error before exit (coreutils' close_stdout does) would lose the leak */
/* report: fd 2 is then borrowed for the report alone, opened on memtrace's own standard error, and closed  */
/* again after it. Returns whether it was borrowed.                                                          */
static int borrow_stderr(void)
{
    if (mt_sys2(SYS_fcntl, 2, F_GETFD) >= 0) return 0;
    char path[40] = "/proc/", digits[12];
    int n = 0, at = 6;
    unsigned v = (unsigned)g.ppid;
    do { digits[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    while (n) path[at++] = digits[--n];
    mt_memcpy(path + at, "/fd/2", 6);
    long fd = mt_sys3(SYS_open, path, O_WRONLY | O_APPEND | O_CLOEXEC, 0);
    if (fd < 0) return 0;
    if (fd != 2) {
        long r = mt_sys3(SYS_dup3, fd, 2, O_CLOEXEC);
        mt_sys1(SYS_close, fd);
        if (r != 2) return 0;
    }
    return 1;
}

/* ---- blocks ---- */

/* Whether pc's function is the C++ library's allocation plumbing (check_sites.c's mc_plumbing): a verdict */
/* not known yet is looked up with all traced memory open, as a report names code (the loader's link maps and */
/* the module tables may lie on the traced heap).                                                            */
static int plumbing(uintptr_t pc)
{
    int p = mc_plumbing_known(pc);
    if (p != -2) return p;
    world(1);
    p = mc_plumbing(pc);
    world(0);
    return p;
}

/* A block's allocating or freeing site (docs/check.md, "Sites in the user's code"): the wrapper's caller pc, */
/* or, when pc lies in the C++ library's plumbing, the first caller above it that does not (unwound by        */
/* .eh_frame from the wrapper's frame, as allocation stacks are). Called outside cs.lock (world takes g.lock). */
__attribute__((noinline)) static uintptr_t user_frame(uintptr_t pc)
{
    if (!pc || plumbing(pc) != 1) return pc;
    uint64_t buf[16];
    int n = mt_frames_above((uintptr_t)__builtin_frame_address(0), pc, 17, buf);
    for (int i = 0; i < n; i++) {
        uintptr_t at = (uintptr_t)(buf[i] & ~MT_FRAME_CFI);
        int p = plumbing(at);
        if (p == 0) return at;
        if (p < 0) break;
    }
    return pc;
}

/* A checked block of n bytes aligned to al (a power of two); NULL when the reservation is full. */
void *check_alloc(size_t n, size_t al, int family, int fn, uintptr_t pc, int zero)
{
    if (al < 16) al = 16;
    if (!heap_serves()) { /* a forked child: glibc's blocks, unchecked (its free goes to glibc: not ours) */
        if (zero) return real.calloc(1, n);
        return al <= 16 ? real.malloc(n) : real.memalign(al, n);
    }
    size_t left = al > LEFT ? al : LEFT;
    size_t body = (n + 7) & ~(size_t)7;
    size_t total = left + body + mc_right_redzone(n);
    if (n > ((size_t)1 << 40) || total < n) {
        errno = ENOMEM;
        return NULL;
    }
    int dirty;
    uintptr_t chunk = (uintptr_t)heap_alloc(total, al, &dirty);
    if (!chunk) {
        errno = ENOMEM;
        return NULL;
    }
    size_t usable = heap_usable((void *)chunk);
    if (usable < total) usable = total;
    uintptr_t user = chunk + left;
    struct mc_block *b = (struct mc_block *)(user - sizeof(struct mc_block)), *h = A(b);
    if (zero && dirty) mt_memzero(heap_alias((void *)user), n);
    h->size = n;
    h->chunk = (void *)chunk;
    h->alloc_pc = (const void *)user_frame(pc);
    h->free_pc = NULL;
    h->family = (uint8_t)family;
    h->fn = (uint8_t)fn;
    h->tid = (uint32_t)mytid();
    mc_poison(chunk, left, MC_HEAP_LEFT);
    mc_unpoison(user, n);
    mc_poison(user + body, usable - left - body, MC_HEAP_RIGHT);
    enter_critical();
    spin_lock(&cs.lock);
    mc_link_live(&cs.l, b, A);
    spin_unlock(&cs.lock);
    leave_critical();
    return (void *)user;
}

/* The header of the block p starts, live or in quarantine (program address), or NULL. */
static struct mc_block *header_at(uintptr_t p)
{
    if ((p & 15) || !heap_owns((void *)p) || !heap_owns((void *)(p - LEFT))) return NULL;
    return mc_header_at(p, A);
}

/* The block an address is in or next to (check_objects.c asks; everything is open then). */
struct mc_block *mc_block_of(uintptr_t addr, int *inside)
{
    if (!heap_owns((void *)addr)) return NULL;
    uintptr_t g8 = addr & ~(uintptr_t)7;
    if (*MC_SHADOW(g8) == MC_HEAP_LEFT) {
        for (int i = 0; i < 8192 && heap_owns((void *)g8) && *MC_SHADOW(g8) == MC_HEAP_LEFT; i++) g8 += 8;
        struct mc_block *b = header_at(g8);
        if (b) *inside = 0;
        return b;
    }
    for (int i = 0; i < (1 << 20) && heap_owns((void *)g8); i++, g8 -= 8) {
        uint8_t s = *MC_SHADOW(g8);
        if (s == MC_HEAP_LEFT) {
            struct mc_block *b = header_at(g8 + 8);
            if (b) *inside = addr < (uintptr_t)(b + 1) + A(b)->size;
            return b;
        }
        if (s != 0 && s >= 0x80 && s != MC_HEAP_RIGHT && s != MC_HEAP_FREED) return NULL;
    }
    return NULL;
}

const char *mc_family_name(int f) { return mc_alloc_name(f); }

static void report_free(const char *kind, uintptr_t p, const struct mc_block *b, uintptr_t pc, const char *what)
{
    world(1);
    int borrowed = borrow_stderr();
    WITH_FRAMES(pc, mc_report_free(kind, p, b, (const void *)pc, what));
    if (borrowed) mt_sys1(SYS_close, 2);
    world(0);
}

/* Whether p could be a block glibc served (the agent's heap was not ready or full): it is handed to glibc. */
static int glibc_may_own(uintptr_t p)
{
    Dl_info info;
    if (dladdr((void *)p, &info)) return 0; /* inside a loaded module: static memory */
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    if (p >= sp && p - sp < (64UL << 20)) return 0; /* this thread's stack */
    return 1;
}

/* free, delete, delete[] (family) and realloc (what): 1 when the pointer is not ours and glibc must have it. */
int check_free(void *ptr, int family, uintptr_t pc, const char *what)
{
    uintptr_t u = (uintptr_t)ptr;
    if (!u) return 0;
    if (!what) what = mc_release_name(family);
    if (!heap_owns(ptr)) {
        if (glibc_may_own(u)) return 1;
        report_free("invalid free", u, NULL, pc, what);
        return 0;
    }
    struct mc_block *b = header_at(u);
    if (!b || A(b)->magic != MC_LIVE) {
        report_free(b ? "double free" : "invalid free", u, b, pc, what);
        return 0;
    }
    struct mc_block *h = A(b);
    if (h->family != family) report_free("allocator mismatch", u, b, pc, what);
    uintptr_t site = user_frame(pc);
    enter_critical();
    spin_lock(&cs.lock);
    if (h->magic != MC_LIVE) { /* another thread freed it meanwhile */
        spin_unlock(&cs.lock);
        leave_critical();
        return 0;
    }
    mc_unlink_live(&cs.l, b, A);
    struct mc_block *out = mc_quarantine(&cs.l, b, (const void *)site, A);
    spin_unlock(&cs.lock);
    leave_critical();
    while (out) {
        struct mc_block *o = out, *oh = A(o);
        out = oh->next;
        void *chunk = oh->chunk;
        mc_poison((uintptr_t)chunk, heap_usable(chunk), MC_HEAP_FREED);
        heap_free(chunk);
    }
    return 0;
}

/* realloc: a new block with the old contents, the old one released as free would. */
void *check_realloc(void *old, size_t n, uintptr_t pc)
{
    if (!old) return check_alloc(n, 16, MC_MALLOC, 2, pc, 0);
    struct mc_block *b = header_at((uintptr_t)old);
    if (!b || A(b)->magic != MC_LIVE) {
        if (!b && !heap_owns(old) && glibc_may_own((uintptr_t)old)) return real.realloc(old, n);
        report_free(b ? "double free" : "invalid free", (uintptr_t)old, b, pc, "realloc");
        return NULL;
    }
    if (A(b)->family != MC_MALLOC) report_free("allocator mismatch", (uintptr_t)old, b, pc, "realloc");
    if (n == 0) {
        check_free(old, A(b)->family, pc, "realloc");
        return NULL;
    }
    void *p = check_alloc(n, 16, MC_MALLOC, 2, pc, 0);
    if (!p) return NULL;
    size_t keep = A(b)->size < n ? A(b)->size : n;
    mt_memcpy(heap_alias(p), heap_alias(old), keep);
    check_free(old, A(b)->family, pc, "realloc");
    return p;
}

size_t check_usable(void *p)
{
    struct mc_block *b = p ? header_at((uintptr_t)p) : NULL;
    return b && A(b)->magic == MC_LIVE ? A(b)->size : 0;
}

/* ---- accesses ---- */

/* continue mode: a site reported once is not worth opening everything again for */
static uintptr_t reported[256];
static int was_reported(uintptr_t pc)
{
    for (int i = 0; i < 256 && reported[i]; i++)
        if (reported[i] == pc) return 1;
    return 0;
}
static void note_reported(uintptr_t pc)
{
    for (int i = 0; i < 256; i++)
        if (!reported[i] || reported[i] == pc) { reported[i] = pc; return; }
}

static void report_access(uintptr_t addr, size_t size, int write, uintptr_t pc, const char *by)
{
    if (was_reported(pc)) return;
    world(1);
    int borrowed = borrow_stderr();
    WITH_FRAMES(pc, mc_report_access(addr, size, write ? MC_WRITE : MC_READ, (const void *)pc, by));
    if (borrowed) mt_sys1(SYS_close, 2);
    world(0);
    note_reported(pc); /* continue mode: said once */
}

void check_counted(void) { count(&cs.accesses); }
int check_in_libc(uintptr_t ip) { return ip >= cs.libc_s && ip < cs.libc_e; }

/* A global's extent left (check_globals.c), reported as report_access does the shadow's. */
void check_report_extent(uintptr_t addr, size_t size, int write, uintptr_t pc, const char *by, const struct mc_extent *x)
{
    if (was_reported(pc)) return;
    world(1);
    int borrowed = borrow_stderr();
    WITH_FRAMES(pc, mc_report_extent(addr, size, write ? MC_WRITE : MC_READ, (const void *)pc, by, x));
    if (borrowed) mt_sys1(SYS_close, 2);
    world(0);
    note_reported(pc);
}

/* The n bytes a rep movs/stos goes through from p (its current element at p; with DF set it goes down, so  */
/* the range ends with that element), when p is on the heap: against the shadow, reported as one access.  */
/* Returns whether it reported (continue mode goes on).                                                   */
static int check_string_range(uintptr_t p, size_t n, size_t elem, int down, int write, uintptr_t ip)
{
    if (!heap_owns((void *)p)) return 0;
    uintptr_t lo = down ? p + elem - n : p, bad = mc_first_bad(lo, n);
    if (!bad) return 0;
    if (ip >= cs.libc_s && ip < cs.libc_e && !write && *MC_SHADOW(bad) != MC_HEAP_FREED) return 0;
    report_access(lo, n, write, ip, NULL);
    return 1;
}

/* A fault on the heap by the program: the operand against the shadow. */
static void check_fault_in(ucontext_t *uc, uintptr_t addr, int write);
void check_fault(ucontext_t *uc, uintptr_t addr, int write)
{
    check_fault_gr = uc->uc_mcontext.gregs;
    check_fault_in(uc, addr, write);
    check_fault_gr = NULL;
}

static void check_fault_in(ucontext_t *uc, uintptr_t addr, int write)
{
    greg_t *gr = uc->uc_mcontext.gregs;
    uintptr_t ip = ts.stepping == STEP_OOL ? ts.ool_ip : (uintptr_t)gr[REG_RIP];
    uintptr_t lo = addr;
    size_t size = 1;
    if (!ts.stepping) {
        struct insn *e = cache_lookup(ip);
        if (e && e->string && e->rep && (e->string == STR_MOVS || e->string == STR_STOS) && gr[REG_RCX] > 0) {
            /* rep movs/stos (gcc's inline memcpy and memset at -O2): only the element the CPU was at faults; */
            /* the rest are emulated through the alias or run with the page open, unchecked. So the whole     */
            /* ranges left (rcx elements from rsi and rdi, as the CPU has them now), checked here at once.     */
            size_t elem = e->elem ? e->elem : 1, left = (size_t)gr[REG_RCX];
            if (left > ((size_t)1 << 32) / elem) left = ((size_t)1 << 32) / elem;
            int down = (gr[REG_EFL] & 0x400) != 0;
            count(&cs.accesses);
            if (e->string == STR_MOVS && check_string_range((uintptr_t)gr[REG_RSI], left * elem, elem, down, 0, ip)) return;
            check_string_range((uintptr_t)gr[REG_RDI], left * elem, elem, down, 1, ip);
            return;
        }
        if (e && e->string) {
            size = e->elem ? e->elem : 1;
        } else if (e && e->rslot && e->opsize) {
            uintptr_t ea = operand_address(e, gr);
            if (addr >= ea && addr - ea < e->opsize) {
                lo = ea;
                size = e->opsize;
            }
        }
    }
    count(&cs.accesses);
    uintptr_t bad = mc_first_bad(lo, size);
    if (!bad) return;
    if (ip >= cs.libc_s && ip < cs.libc_e && !write && *MC_SHADOW(bad) != MC_HEAP_FREED) return;
    report_access(lo, size, write, ip, NULL);
}

/* A SIGSEGV or SIGBUS that kills the program (it has no handler; fault.c's forward): not one of the checks'   */
/* (those are on the heap), but the program's own bug, said as ASan says "SEGV on unknown address": the first */
/* 64 KB a null dereference, anything else a wild access, with the operand's address, size and direction from */
/* the decoded instruction (else the fault's address and the page fault's write bit). Then the program dies   */
/* of the signal as natively. A signal sent by kill() or raise() (si_code <= 0) is not a fault: nothing said. */
/* A ret that faults taking an overwritten return address (non-canonical: a general protection fault at the */
/* ret), or the fetch fault at an unmapped one it took (the quad just above %rsp is the address faulted at). */
/* At -O0 an overflow of a stack array runs over the saved %rbp and the return address, and nothing else    */
/* sees it (the stack has no redzones in a binary nobody rebuilt): said as a stack smash of the function's   */
/* frame, named by the executable's symbols, rather than as a wild access. Returns whether it was one.      */
static int smashed_return(siginfo_t *si, ucontext_t *uc)
{
    greg_t *gr = uc->uc_mcontext.gregs;
    uintptr_t ip = (uintptr_t)gr[REG_RIP], sp = (uintptr_t)gr[REG_RSP];
    uint64_t target;
    if (gr[REG_ERR] & PF_FETCH_BIT) {
        if (si->si_code != SEGV_MAPERR && si->si_code != SEGV_ACCERR) return 0;
        if (user_transfer(&target, sp - 8, 8, 0) || target != ip) return 0;
        world(1);
        int borrowed = borrow_stderr();
        mc_report_smash(sp - 8, target, NULL, NULL); /* no frames: the chain is what was smashed */
        if (borrowed) mt_sys1(SYS_close, 2);
        world(0);
        return 1;
    }
    unsigned char c[2];
    if (si->si_code != SI_KERNEL || user_transfer(c, ip, 2, 0)) return 0;
    int ret = c[0] == 0xc3 || c[0] == 0xc2 || ((c[0] == 0xf2 || c[0] == 0xf3) && (c[1] == 0xc3 || c[1] == 0xc2));
    if (!ret || user_transfer(&target, sp, 8, 0)) return 0;
    uint64_t top = target >> 47;
    if (top == 0 || top == 0x1ffff) return 0; /* canonical: not why the ret faulted */
    world(1);
    int borrowed = borrow_stderr();
    mc_report_smash(sp, target, (const void *)ip, check_function_of(ip)); /* no frames: its %rbp was smashed too */
    if (borrowed) mt_sys1(SYS_close, 2);
    world(0);
    return 1;
}

void check_segv(int sig, siginfo_t *si, ucontext_t *uc)
{
    if (si->si_code <= 0 || !g.recording) return;
    if (sig == SIGSEGV && smashed_return(si, uc)) return;
    greg_t *gr = uc->uc_mcontext.gregs;
    uintptr_t ip = (uintptr_t)gr[REG_RIP], addr = (uintptr_t)si->si_addr, ea = addr;
    if (gr[REG_ERR] & PF_FETCH_BIT) return; /* a jump to nowhere: no access of data to name */
    size_t size = 0;
    int write = (gr[REG_ERR] & PF_WRITE_BIT) != 0;
    int known = decode_fault_operand(ip, gr, addr, &ea, &size, &write) || si->si_code != SI_KERNEL;
    if (!known) size = 0;
    const char *why = sig == SIGBUS ? "a mapped file's page past its end"
                    : addr >= MC_SHADOW_OFFSET && addr < MC_SHADOW_END ? "memtrace's shadow memory"
                    : si->si_code == SEGV_MAPERR ? "unmapped memory"
                    : si->si_code == SEGV_ACCERR ? (write ? "memory that may not be written" : "memory that may not be read")
                    : "a non-canonical address";
    if (si->si_code == SEGV_MAPERR || si->si_code == SEGV_ACCERR) ea = addr; /* the byte the CPU refused */
    world(1);
    int borrowed = borrow_stderr();
    check_fault_gr = gr;
    WITH_FRAMES(ip, mc_report_segv(ea, known, size, write ? MC_WRITE : MC_READ, (const void *)ip, why));
    check_fault_gr = NULL;
    if (borrowed) mt_sys1(SYS_close, 2);
    world(0);
}

/* memcpy, memmove, memset of the program: their whole ranges (on the stack against the frame's variables: */
/* check_locals.c).                                                                                        */
void check_block(const void *d, const void *s, size_t n, uintptr_t pc, const char *fn)
{
    if (!n || !g.recording) return;
    count(&cs.libc_checks);
    if (s && heap_owns(s) && mc_first_bad((uintptr_t)s, n)) report_access((uintptr_t)s, n, 0, pc, fn);
    else if (s && check_global_range((uintptr_t)s, n, 0, pc, fn)) return;
    else if (s && check_stack_range((uintptr_t)s, n, 0, pc, fn)) return;
    if (heap_owns(d) && mc_first_bad((uintptr_t)d, n)) report_access((uintptr_t)d, n, 1, pc, fn);
    else if (!check_global_range((uintptr_t)d, n, 1, pc, fn)) check_stack_range((uintptr_t)d, n, 1, pc, fn);
}

/* The kernel's writes into the program's buffers by read, pread64 and recvfrom (syscall.c, after the call):   */
/* the bytes it wrote, ret, as one write of the function, as check_block checks a memcpy's destination; by    */
/* readv, preadv and recvmsg, the ret bytes fill their vector's buffers in order, each checked so. The site   */
/* is the libc function's caller, the return address on top of the stack when the syscall instruction is     */
/* libc's and ran with nothing pushed (glibc's single-threaded path), whose %rbp locates a stack buffer among */
/* the caller's variables (-O0 -g code); else the syscall instruction, and no stack check.                   */
void check_syscall_out(long nr, const long *a, long ret, const ucontext_t *uc)
{
    const char *fn = nr == SYS_read ? "read" : nr == SYS_pread64 ? "pread" : nr == SYS_recvfrom ? "recvfrom"
                   : nr == SYS_readv ? "readv" : nr == SYS_preadv ? "preadv" : nr == SYS_recvmsg ? "recvmsg" : NULL;
    if (!fn || ret <= 0 || ts.in_input) return;   /* a wrapped input function's: its range, after it */
    const greg_t *gr = uc->uc_mcontext.gregs;
    uintptr_t ip = (uintptr_t)gr[REG_RIP], top = 0, sp = (uintptr_t)gr[REG_RSP];
    int frame = check_in_libc(ip) && !user_transfer(&top, sp, sizeof top, 0) && top >= 4096 && !check_in_libc(top) &&
                check_function_of(top);
    if (frame) ip = top;   /* a stack buffer is then checked against the caller's frame, which %rbp still is */
    int vector = nr == SYS_readv || nr == SYS_preadv || nr == SYS_recvmsg;
    uintptr_t iov = (uintptr_t)a[1];
    size_t cnt = vector ? (size_t)a[2] : 1, left = (size_t)ret;
    if (nr == SYS_recvmsg) {   /* the msghdr and the vector may be on the (traced) heap: copy_in opens them */
        struct msghdr m;
        if (copy_in(&m, (uintptr_t)a[1], sizeof m)) return;
        iov = (uintptr_t)m.msg_iov;
        cnt = m.msg_iovlen;
    }
    for (size_t i = 0; i < cnt && left; i++) {
        struct iovec v = {(void *)a[1], (size_t)a[2]};   /* one buffer: read's a[1], a[2] bytes */
        if (vector && copy_in(&v, iov + i * sizeof v, sizeof v)) return;
        size_t n = v.iov_len < left ? v.iov_len : left;
        left -= n;
        if (!n) continue;
        if (frame && g.recording && check_stack_range_at((uintptr_t)v.iov_base, n, 1, ip, fn, (uintptr_t)gr[REG_RBP], sp))
            continue;
        check_block(v.iov_base, NULL, n, ip, fn);
    }
}

/* ---- leaks ---- */

/* the stack of blocks to scan grows in the agent's own pages (no libc malloc here) */
static int grow_stack(struct mc_scan *s)
{
    size_t cap = s->cap ? 2 * s->cap : 4096;
    size_t *grown = agent_map(cap * sizeof *grown);
    if (!grown) return 0;
    if (s->stack) {
        mt_memcpy(grown, s->stack, s->depth * sizeof *grown);
        mt_unmap_pages(s->stack, s->cap * sizeof *grown);
    }
    s->stack = grown;
    s->cap = cap;
    return 1;
}

static int on_heap(uintptr_t v) { return heap_owns((void *)v); }

static int scan_module(struct dl_phdr_info *info, size_t size, void *data)
{
    mc_scan_module(data, info, size, 0);
    return 0;
}

static int from_loader(const void *pc)
{
    Dl_info info;
    if (!dladdr(pc, &info) || !info.dli_fname) return 0;
    const char *f = info.dli_fname;
    for (size_t i = 0; f[i]; i++)
        if (mt_strncmp(f + i, "/ld-linux", 9) == 0) return 1;
    return 0;
}

extern void *__libc_stack_end;

/* At exit (check_outcome.c's atexit handler): unreachable live blocks, grouped by allocating call. Runs with */
/* all traced memory open: roots and blocks are read in place.                                              */
__attribute__((noinline)) void mc_leak_check(void)
{
    if (!chk.on) return;
    world(1);
    enter_critical();
    spin_lock(&cs.lock);
    size_t n = 0;
    for (struct mc_block *b = cs.l.live; b; b = b->next) n++;
    struct mc_scan s = {.candidate = on_heap, .grow = grow_stack};
    s.blocks = n ? agent_map(n * sizeof *s.blocks) : NULL;
    s.marked = n ? agent_map(n) : NULL;
    if (!s.blocks || !s.marked) {
        spin_unlock(&cs.lock);
        leave_critical();
        world(0);
        return;
    }
    size_t k = 0;
    for (struct mc_block *b = cs.l.live; b; b = b->next) s.blocks[k++] = b;
    spin_unlock(&cs.lock);
    leave_critical();
    s.n = n;
    mc_sort_blocks(s.blocks, n);
    dl_iterate_phdr(scan_module, &s);
    uintptr_t top = (uintptr_t)__libc_stack_end, here = (uintptr_t)__builtin_frame_address(0);
    if (top > here && top - here < (1UL << 30)) mc_scan_range(&s, here, page_up(top));
    /* and the program's own anonymous mappings (pymalloc's arenas, other threads' stacks); the heap's blocks
     * live in the agent's shared mapping, which has a path, so nothing of the heap is cut here */
    mc_scan_anon(&s, NULL);
    mc_scan_reachable(&s);
    const struct mc_block **sites = agent_map(n * sizeof *sites);
    size_t *counts = agent_map(n * sizeof *counts), *bytes = agent_map(n * sizeof *bytes);
    size_t leaked, leaked_bytes;
    size_t nsites = mc_group_leaks(&s, from_loader, sites, counts, bytes, &leaked, &leaked_bytes);
    if (leaked) {
        int borrowed = borrow_stderr();
        mc_report_leaks(leaked, leaked_bytes, sites, counts, bytes, nsites);
        if (borrowed) mt_sys1(SYS_close, 2);
    }
    world(0);
}

/* ---- C++'s operators new and delete: the family of each block, for mismatches ---- */

static void *(*real_new)(size_t), *(*real_new_array)(size_t);
static void (*real_delete)(void *), (*real_delete_array)(void *);

/* Only when checking, with the hooks off (init.c): the real operators, for a failed allocation and blocks not ours. */
void check_resolve(void)
{
    real_new = (void *(*)(size_t))dlsym(RTLD_NEXT, "_Znwm");
    real_new_array = (void *(*)(size_t))dlsym(RTLD_NEXT, "_Znam");
    real_delete = (void (*)(void *))dlsym(RTLD_NEXT, "_ZdlPv");
    real_delete_array = (void (*)(void *))dlsym(RTLD_NEXT, "_ZdaPv");
}

#define CALLER ((uintptr_t)__builtin_return_address(0))

static void *new_of(size_t n, int family, uintptr_t pc, int nothrow)
{
    void *p = check_alloc(n, 16, family, 4, pc, 0);
    if (p) check_note_alloc(p, n, pc);
    if (p || nothrow) return p;
    /* out of memory: the real operator throws std::bad_alloc (or calls the new handler) */
    if (family == MC_NEW_ARRAY ? !real_new_array : !real_new) abort();
    return family == MC_NEW_ARRAY ? real_new_array(n) : real_new(n);
}

static void delete_of(void *p, int family, uintptr_t pc)
{
    if (check_free(p, family, pc, NULL)) {
        if (family == MC_NEW_ARRAY && real_delete_array) real_delete_array(p);
        else if (real_delete) real_delete(p);
        else free(p);
        return;
    }
    if (p) check_note_free(p, pc);
}

/* Not checking: operator new is malloc, as libstdc++'s is underneath, with the caller of new as the    */
/* block's site (ts.new_caller, which the malloc wrapper takes), so that blocks are named by the code   */
/* that made them rather than all by operator new. Only when malloc fails does libstdc++'s own operator */
/* run, for the new handler and std::bad_alloc: looked up then, not at start (a program calling new has */
/* libstdc++, so the lookup cannot fail; a failing dlsym mallocs its error string into the traced heap). */
#define REAL(var, name) (var ? var : (var = (typeof(var))dlsym(RTLD_NEXT, name)))
static void *plain_new_nothrow(size_t n, uintptr_t caller)
{
    ts.new_caller = caller;
    void *p = malloc(n);
    ts.new_caller = 0;
    return p;
}
static void *plain_new(size_t n, uintptr_t caller, void *(**real)(size_t), const char *name)
{
    void *p = plain_new_nothrow(n, caller);
    if (p || !REAL(*real, name)) return p;
    return (*real)(n);
}
EXPORT void *_Znwm(size_t n)
{
    if (!chk.on) return plain_new(n, CALLER, &real_new, "_Znwm");
    return new_of(n, MC_NEW, CALLER, 0);
}
EXPORT void *_Znam(size_t n)
{
    if (!chk.on) return plain_new(n, CALLER, &real_new_array, "_Znam");
    return new_of(n, MC_NEW_ARRAY, CALLER, 0);
}
EXPORT void *_ZnwmRKSt9nothrow_t(size_t n, const void *t)
{
    if (!chk.on) return plain_new_nothrow(n, CALLER);
    return new_of(n, MC_NEW, CALLER, 1);
}
EXPORT void *_ZnamRKSt9nothrow_t(size_t n, const void *t)
{
    if (!chk.on) return plain_new_nothrow(n, CALLER);
    return new_of(n, MC_NEW_ARRAY, CALLER, 1);
}
EXPORT void _ZdlPv(void *p)
{
    if (!chk.on) { if (REAL(real_delete, "_ZdlPv")) real_delete(p); else free(p); return; }
    delete_of(p, MC_NEW, CALLER);
}
EXPORT void _ZdaPv(void *p)
{
    if (!chk.on) { if (REAL(real_delete_array, "_ZdaPv")) real_delete_array(p); else free(p); return; }
    delete_of(p, MC_NEW_ARRAY, CALLER);
}
EXPORT void _ZdlPvm(void *p, size_t n)
{
    if (!chk.on) { if (REAL(real_delete, "_ZdlPv")) real_delete(p); else free(p); return; }
    delete_of(p, MC_NEW, CALLER);
}
EXPORT void _ZdaPvm(void *p, size_t n)
{
    if (!chk.on) { if (REAL(real_delete_array, "_ZdaPv")) real_delete_array(p); else free(p); return; }
    delete_of(p, MC_NEW_ARRAY, CALLER);
}
EXPORT void _ZdlPvRKSt9nothrow_t(void *p, const void *t) { _ZdlPv(p); }
EXPORT void _ZdaPvRKSt9nothrow_t(void *p, const void *t) { _ZdaPv(p); }
