/*
 * rw_arm.c: access stacks in `memtrace run --mode rewrite` (docs/stacks.md, "Access stacks"). Part of
 * libmemtrace-rt.so. A probe stores a slot and never compares, so which accesses get their callers is decided
 * per place: with --stack-depth above 1, rw_apply.c writes each planned `jmp rel32` with an `int3` (0xcc) over
 * its e9 ("armed"), after the module's puns are written, and gives this file the table of those places
 * (rw_arm_add). The first RW_ARM_RUNS executions of each trap; rw_trap.c's handler hands them here (rw_arm):
 * the program's registers are unwound at the instruction itself by its module's .eh_frame (mt_unwind, as
 * fault mode's send_context does), the stack goes into the thread's buffer as an MT_CONTEXT with flag
 * MT_CONTEXT_INSTRUCTION (word 0 the instruction: the stack belongs to that trampoline's next records only,
 * docs/event-stream.md), and the thread goes on at the jump's trampoline, as the jump would have sent it.
 * The last armed execution writes the e9 back (through /proc/self/mem, which writes a read-only code page
 * without an mprotect another thread could race; mprotect under a lock where the kernel refuses): from then on
 * the place costs what an unarmed one does, and nothing on the probes' path tests anything.
 *
 * Not armed: short jumps (`eb` to dead padding), and a jump whose e9 lies within 8 bytes after an int3 place
 * of the plan, whose punned jump's rel32 may read that e9 (a pun reads at most 3 prefixes, its e9 and 4 bytes).
 *
 * How it reads: nothing on stderr; the stacks are MT_CONTEXT records, which Java joins to the records that
 * follow (analysis.Interpretation).
 *
 * What it gets wrong: only an instruction's first RW_ARM_RUNS executions (in the whole process, all threads)
 * get a stack, counted also when the runtime's own libc calls, a stopped recording or a vfork child run it (no
 * stack is sent then); an instruction moved into another's trampoline (a group, a tail) has a stack only when
 * its jump's place was the one that trapped; a trap costs a signal (some µs) and an unwind, 4 per place.
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
static rt_lock write_lock; /* the mprotect way of writing an e9 back */

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
static void write_back(uint64_t at, unsigned char byte)
{
    unsigned char e9 = byte;
    long fd = mt_sys4(SYS_openat, AT_FDCWD, "/proc/self/mem", O_RDWR | O_CLOEXEC, 0);
    if (fd >= 0) {
        long w = mt_sys4(SYS_pwrite64, fd, &e9, 1, at);
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

/* The stack of the instruction at insn, in the state uc holds, as an MT_CONTEXT into the thread's buffer. */
static void send_stack(ucontext_t *uc, uint64_t insn)
{
    if (rt_self.internal || rt.state != RT_RUNNING || !rt.recording) return;
    char *c = __memtrace_cursor;
    /* the sink (the runtime's own libc calls), or a thread past its end: no buffer of the program's */
    if (c && (!rt_self.buf || c < rt_self.buf->base || c > rt_self.buf->end)) return;
    if (rt_in_vfork_child()) return;
    greg_t *g = uc->uc_mcontext.gregs;
    struct {
        struct mt_rec_header h;
        uint64_t w[1 + MT_STACK_MAX_CONTEXT];
    } r;
    int max = rt.stack_depth - 1 < MT_STACK_MAX_CONTEXT ? rt.stack_depth - 1 : MT_STACK_MAX_CONTEXT, n = 0;
    uintptr_t sp = (uintptr_t)g[REG_RSP], tp, hi = 0, end = (uintptr_t)__libc_stack_end;
    __asm__("mov %%fs:0, %0" : "=r"(tp));
    if (end > sp && end - sp < (1UL << 30)) hi = end;
    else if (tp > sp && tp - sp < (1UL << 30)) hi = tp;
    /* mt_unwind looks a return address's row up one byte before it: insn + 1 finds the instruction's own */
    if (hi) n = mt_unwind(insn + 1, sp, (uintptr_t)g[REG_RBP], sp, hi, r.w + 1, max);
    r.w[0] = insn;
    r.h.type = MT_CONTEXT;
    r.h.flags = MT_CONTEXT_INSTRUCTION;
    r.h.size = (uint16_t)(sizeof r.h + 8 * (n + 1));
    r.h.tid = (uint32_t)rt_tid();
    /* a loop that keeps its cursor in a register: the record goes after its slots, the register after it */
    int reg = rt_signal_cursor(uc);
    greg_t adopted = reg >= 0 ? g[reg] : 0;
    rt_emit(&r, r.h.size);
    if (reg >= 0 && g[reg] == adopted) g[reg] = (greg_t)__memtrace_cursor;
}

int rw_arm(ucontext_t *uc, uint64_t pc)
{
    struct rw_arm_entry *e = rw_arm_find(pc);
    if (!e) return 0;
    uint32_t run = __atomic_add_fetch(&e->runs, 1, __ATOMIC_RELAXED);
    if (run <= RW_ARM_RUNS) send_stack(uc, e->insn);
    if (run == RW_ARM_RUNS) write_back(pc, 0x48);
    /* the probe's `lea -128(%rsp),%rsp`, emulated (flags untouched, as lea leaves them); a thread that */
    /* trapped before another wrote the byte back comes here too */
    greg_t *g = uc->uc_mcontext.gregs;
    g[REG_RSP] -= 128;
    g[REG_RIP] = (greg_t)(pc + RW_ARM_LEA);
    return 1;
}
