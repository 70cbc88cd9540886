/*
 * rw_arm.c: access stacks in `memtrace run` (rewrite mode; docs/stacks.md, "Access stacks"). Part of
 * libmemtrace-rt.so. A probe stores a slot and never compares, so which accesses get their callers is decided
 * per trampoline: with --access-stacks (MEMTRACE_ACCESS_STACKS=1; opt-in, as it costs: below) and
 * --stack-depth above 1, rw_apply.c writes an `int3` (0xcc) over the first byte of each
 * trampoline that starts with a REX.W lea (its probe's `lea -128(%rsp),%rsp`, 48 8d 64 24 80, or, in a probe
 * that saves no register, its last site's `lea EA,A`; or a moved instruction's) and gives this file their
 * table (rw_arm_add). A trampoline is entered in the state its module instruction would run in, whether by
 * the instruction's jump, by its int3 or punned jump, or by a branch written straight to it in another
 * trampoline (docs/rewriting.md: an emulated call to a function whose first instruction is patched), so its
 * first RW_ARM_RUNS entries trap, and rw_trap.c's handler hands them here (rw_arm): the registers are
 * unwound at the module instruction by its module's .eh_frame (mt_unwind, as fault mode's send_context does),
 * the stack goes into the thread's buffer as an MT_CONTEXT with flag MT_CONTEXT_INSTRUCTION (word 0 the
 * instruction: the stack belongs to that trampoline's next records, docs/event-stream.md), and the handler
 * emulates the lea and sends the thread on after it. The last armed entry writes the first byte back
 * (through /proc/self/mem, which writes a read-only page without an mprotect another thread could race;
 * mprotect under a lock where the kernel refuses): from then on the trampoline costs what it did, and
 * nothing on the probes' path tests anything. The module's code is not touched, so no punned jump's bytes
 * change.
 *
 * How it reads: nothing on stderr; the stacks are MT_CONTEXT records, which Java joins to the records that
 * follow (analysis.Interpretation).
 *
 * What it gets wrong: only a trampoline's first RW_ARM_RUNS entries (in the whole process, all threads) send
 * a stack, counted also when the runtime's own libc calls, a stopped recording or a vfork child enter it (no
 * stack is sent then); the instructions a trampoline moved after its first share its stack only while the
 * records go forward in the same function; a trap costs a signal (some µs) and an unwind, at most 4 per
 * trampoline entered; arming writes one byte per trampoline, so the trampoline text's pages become the
 * process's own (copied from the page cache at start: libc's 9 MB) instead of shared. So it is opt-in:
 * python3 -S -c pass enters 31,000 trampolines (43,000 for a json.dumps), and the copy, the traps and the
 * write-backs took its CPU from 0.5 s to 1.6 s (bench/results/rewrite-arm-cost.md).
 *
 * A `memtrace cc` build's probes are armed the same way (rt_ccarm.c builds their table at start): the int3
 * covers the first byte of a probe's first site label, a `lea EA,reg` with any addressing, so the handler
 * emulates any REX.W lea (rw_arm_lea, emulate) and unwinds at the probe itself (RW_ARM_UNWIND_AT: its %rsp
 * moves are described by the function's CFI), the stack sent for the group's first instruction. The record
 * goes at the cursor in memory (a trampoline's or a group probe's int3 is before its cursor load), or, for a
 * loop's probe (RW_ARM_LOOP), at the register rt_ccarm.c found its store uses, which then moves past it. No
 * other register is looked at: guessing a loop's register among them (as a program's signal handler then
 * did, rt_signal_cursor; it now reads the same forms, rt_loop_register) took a dead register a probe had
 * left its cursor in, pointing into a buffer since recycled, and wrote the record after stale slots
 * (CcArmedBuffersTest).
 */
#include <fcntl.h>
#include <sys/mman.h>

#include "../runtime/rt.h"

extern void *__libc_stack_end;

#define RW_ARM_TABLES 512

struct rw_arm_table {
    uint64_t lo, hi, module_bias;
    uint32_t n;
    struct rw_arm_entry e[];
};

static struct rw_arm_table *volatile arm_tables[RW_ARM_TABLES];
static int arm_used;
static rt_lock write_lock; /* the mprotect way of writing a byte back */

int rw_arm_add(uint64_t module_bias, const struct rw_arm_entry *e, uint32_t n)
{
    if (!n) return 1;
    if (arm_used == RW_ARM_TABLES) return 0;
    struct rw_arm_table *t = rt_map(sizeof *t + (size_t)n * sizeof *e);
    if (!t) return 0;
    rt_memcpy(t->e, e, (size_t)n * sizeof *e);
    t->lo = e[0].at;
    t->hi = e[n - 1].at;
    t->module_bias = module_bias;
    t->n = n;
    __atomic_store_n(&arm_tables[arm_used], t, __ATOMIC_RELEASE); /* before any of its int3 is written */
    arm_used++;
    return 1;
}

void rw_arm_forget(uint64_t module_bias)
{
    for (int i = 0; i < arm_used; i++) {
        struct rw_arm_table *t = arm_tables[i];
        if (t && t->module_bias == module_bias) __atomic_store_n(&arm_tables[i], NULL, __ATOMIC_RELEASE);
    }
}

static struct rw_arm_entry *rw_arm_find(uint64_t pc)
{
    for (int i = 0; i < RW_ARM_TABLES; i++) {
        struct rw_arm_table *t = __atomic_load_n(&arm_tables[i], __ATOMIC_ACQUIRE);
        if (!t) {
            if (i >= __atomic_load_n(&arm_used, __ATOMIC_RELAXED)) break;
            continue;
        }
        if (pc < t->lo || pc > t->hi) continue;
        uint32_t a = 0, b = t->n;
        while (a < b) {
            uint32_t m = a + (b - a) / 2;
            if (t->e[m].at < pc) a = m + 1;
            else b = m;
        }
        if (a < t->n && t->e[a].at == pc) return &t->e[a];
    }
    return NULL;
}

/* The byte back over the int3 at `at`: /proc/self/mem first, else the page made writable for the store. */
void rw_arm_write(uint64_t at, unsigned char byte)
{
    unsigned char b = byte;
    long fd = mt_sys4(SYS_openat, AT_FDCWD, "/proc/self/mem", O_RDWR | O_CLOEXEC, 0);
    if (fd >= 0) {
        long w = mt_sys4(SYS_pwrite64, fd, &b, 1, at);
        mt_sys1(SYS_close, fd);
        if (w == 1) return;
    }
    uint64_t old = rt_block_signals(), page = at & ~((uint64_t)rt.page - 1);
    rt_lock_take(&write_lock);
    if (mt_sys3(SYS_mprotect, page, rt.page, PROT_READ | PROT_WRITE | PROT_EXEC) == 0) {
        *(volatile unsigned char *)at = byte;
        mt_sys3(SYS_mprotect, page, rt.page, PROT_READ | PROT_EXEC);
    }
    rt_lock_drop(&write_lock);
    rt_restore_signals(old);
}

/* The armed places by address, for rw_arm_find's binary search (a plan's patches need not be in order: the */
/* hops and puns come after the planner's jumps; a cc site table is by object): a heapsort, no libc.       */
static void sift(struct rw_arm_entry *e, uint32_t at, uint32_t n)
{
    for (;;) {
        uint32_t big = at, l = 2 * at + 1, r = l + 1;
        if (l < n && e[l].at > e[big].at) big = l;
        if (r < n && e[r].at > e[big].at) big = r;
        if (big == at) return;
        struct rw_arm_entry x = e[at];
        e[at] = e[big];
        e[big] = x;
        at = big;
    }
}

void rw_arm_sort(struct rw_arm_entry *e, uint32_t n)
{
    for (uint32_t i = n / 2; i-- > 0;) sift(e, i, n);
    for (uint32_t k = n; k-- > 1;) {
        struct rw_arm_entry x = e[0];
        e[0] = e[k];
        e[k] = x;
        sift(e, 0, k);
    }
}

/* The length of the REX.W lea whose first byte is `first` and whose others are at b + 1: REX.W, 8d, ModRM */
/* of a memory operand, SIB, disp8 or disp32; 0 for anything else (a prefix, no REX.W, a register operand). */
int rw_arm_lea(const unsigned char *b, unsigned char first)
{
    if ((first & 0xf8) != 0x48 || b[1] != 0x8d) return 0;
    unsigned mod = b[2] >> 6, rm = b[2] & 7;
    if (mod == 3) return 0;
    int n = 3;
    if (rm == 4) {
        if (mod == 0 && (b[3] & 7) == 5) n += 4; /* no base: disp32 */
        n++;
    } else if (mod == 0 && rm == 5) {
        n += 4; /* rip-relative */
    }
    return n + (mod == 1 ? 1 : mod == 2 ? 4 : 0);
}

/* ucontext's registers by their encoding number (rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8 … r15) */
static const int greg_of[16] = {REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
                                REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15};

/* The lea at pc (its first byte `first`, under the int3), run on uc's registers: flags untouched, as lea */
/* leaves them; rip past it. */
static void emulate(ucontext_t *uc, uint64_t pc, unsigned char first)
{
    const unsigned char *b = (const unsigned char *)pc;
    greg_t *g = uc->uc_mcontext.gregs;
    int len = rw_arm_lea(b, first);
    unsigned mod = b[2] >> 6, rm = b[2] & 7, reg = ((first >> 2) & 1) << 3 | ((b[2] >> 3) & 7);
    uint64_t ea = 0;
    const unsigned char *d = b + 3;
    if (rm == 4) {
        unsigned sib = b[3], index = ((first >> 1) & 1) << 3 | ((sib >> 3) & 7), base = (first & 1) << 3 | (sib & 7);
        d++;
        if (index != 4) ea += (uint64_t)g[greg_of[index]] << (sib >> 6);
        if (mod == 0 && (sib & 7) == 5) {
            int32_t v;
            rt_memcpy(&v, d, 4);
            ea += (uint64_t)(int64_t)v;
        } else {
            ea += (uint64_t)g[greg_of[base]];
        }
    } else if (mod == 0 && rm == 5) {
        int32_t v;
        rt_memcpy(&v, d, 4);
        ea = pc + (uint64_t)len + (uint64_t)(int64_t)v;
    } else {
        ea = (uint64_t)g[greg_of[(first & 1) << 3 | rm]];
    }
    if (mod == 1) {
        ea += (uint64_t)(int64_t)(int8_t)*d;
    } else if (mod == 2) {
        int32_t v;
        rt_memcpy(&v, d, 4);
        ea += (uint64_t)(int64_t)v;
    }
    g[greg_of[reg]] = (greg_t)ea;
    g[REG_RIP] = (greg_t)(pc + (uint64_t)len);
}

/* The stack of e's instruction, in the state uc holds (at e's int3: the instruction itself, or a cc probe  */
/* before it), as an MT_CONTEXT into the thread's buffer. */
static void send_stack(ucontext_t *uc, const struct rw_arm_entry *e)
{
    if (rt_self.internal || rt.state != RT_RUNNING || !rt.recording) return;
    char *c = __memtrace_cursor;
    /* the sink (the runtime's own libc calls), or a thread past its end: no buffer of the program's */
    /* (a vfork child's cursor is the sink too, rt_vfork_child: no getpid per trap to tell it) */
    if (c && (!rt_self.buf || c < rt_self.buf->base || c > rt_self.buf->end)) return;
    greg_t *g = uc->uc_mcontext.gregs;
    /* Where the record goes. A trampoline's or a group probe's int3 stands before its cursor load, so the */
    /* cursor in memory is where the thread's records end and no register holds it: none is looked at (a   */
    /* dead register a probe left its cursor in, from a buffer since recycled, points past the cursor and  */
    /* looks like a loop's: adopting one wrote the record after a stretch of stale slots). A loop's probe  */
    /* (RW_ARM_LOOP) has its cursor in the register rt_ccarm.c read from its store, at or past the one in  */
    /* memory: the record goes there and the register moves past it. Anything else: no stack this time.   */
    int reg = e->flags & RW_ARM_LOOP ? e->cursor : -1;
    if (reg >= 0 && (char *)g[reg] != c) {
        char *v = (char *)g[reg];
        if (!rt_past_cursor(v) || (v - rt_self.buf->base) % 16) return;
        __memtrace_cursor = v;
    }
    struct {
        struct mt_rec_header h;
        uint64_t w[1 + MT_STACK_MAX_CONTEXT];
    } r;
    int max = rt.stack_depth - 1 < MT_STACK_MAX_CONTEXT ? rt.stack_depth - 1 : MT_STACK_MAX_CONTEXT, n = 0;
    uintptr_t sp = (uintptr_t)g[REG_RSP], tp, hi = 0, end = (uintptr_t)__libc_stack_end;
    __asm__("mov %%fs:0, %0" : "=r"(tp));
    if (end > sp && end - sp < (1UL << 30)) hi = end;
    else if (tp > sp && tp - sp < (1UL << 30)) hi = tp;
    uint64_t from = e->flags & RW_ARM_UNWIND_AT ? e->at : e->insn;
    /* mt_unwind looks a return address's row up one byte before it: from + 1 finds the instruction's own */
    if (hi) n = mt_unwind(from + 1, sp, (uintptr_t)g[REG_RBP], sp, hi, r.w + 1, max);
    r.w[0] = e->insn;
    r.h.type = MT_CONTEXT;
    r.h.flags = MT_CONTEXT_INSTRUCTION;
    r.h.size = (uint16_t)(sizeof r.h + 8 * (n + 1));
    r.h.tid = (uint32_t)rt_tid();
    rt_emit(&r, r.h.size);
    /* the loop's register after the record (in a fresh buffer if it filled the old one) */
    if (reg >= 0) g[reg] = (greg_t)__memtrace_cursor;
}

int rw_arm(ucontext_t *uc, uint64_t pc)
{
    struct rw_arm_entry *e = rw_arm_find(pc);
    if (!e) return 0;
    uint32_t run = __atomic_add_fetch(&e->runs, 1, __ATOMIC_RELAXED);
    if (run <= RW_ARM_RUNS) send_stack(uc, e);
    if (run == RW_ARM_RUNS) rw_arm_write(pc, e->byte);
    /* a thread that trapped before another wrote the byte back comes here too */
    emulate(uc, pc, e->byte);
    return 1;
}
