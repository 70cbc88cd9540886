/*
 * memtrace agent, the fault path. How an access is caught (the MadT scheme):
 *   1. Traced pages have all access rights removed (traced.c).
 *   2. An access faults; the SIGSEGV handler records {ip, address, read/write as the CPU reported it,
 *      thread} as an MT_ACCESS record and gives the page its rights back.
 *   3. The instruction runs once, then its pages lose their rights again. An instruction that faults on
 *      several pages collects them all before it completes (the later records carry MT_ACC_SAME_STEP).
 *      How it runs is decided once per instruction address (decode.c):
 *      - Redirected (memory moved onto a memfd, traced.c; one ModRM memory operand): nothing is opened.
 *        A free general register (the scratch) is saved in mt_scratch_save and set to the operand's
 *        address in the alias view; a copy of the instruction that names [scratch] runs, reloads the
 *        scratch from %fs itself and jumps to mt_ool_return. No other thread can slip through.
 *      - Out of line: a copy of the instruction in a code-cache slot near the original code runs in its
 *        place and jumps on to mt_ool_return, a stub that closes the pages from the program's stack,
 *        leaving every register and flag as the instruction did, and continues after the original
 *        instruction. A fault of the copy is recorded and reported at the original address.
 *      - Emulated: jmp/call through memory (every PLT stub reads the executable's GOT) reads its target
 *        (through the alias, or while the page is open) and does not run at all; movs/stos/lods/cmps/scas
 *        on moved memory are done element by element through the alias (an untraced side, the stack,
 *        through the kernel), recorded as the trap flag would
 *        (cmps/scas set the arithmetic flags themselves); push/pop of a moved memory operand with an
 *        untraced stack slot are done through the alias, recorded as the open route would.
 *      - With the trap flag: branches and anything else that reads RIP, rep string instructions (one
 *        record per iteration), div/idiv (a #DE must show the program its own address), system
 *        instructions. The CPU traps after the instruction; the SIGTRAP handler closes. MEMTRACE_STEP=trap
 *        takes the trap for every instruction, as does a process where libZydis.so.4.0 cannot be loaded.
 *   Signals wait until the step is over: for a trap step the handler blocks them in the signal frame's
 *   uc_sigmask and the trap puts the program's mask back; an out-of-line step blocks nothing (that would
 *   cost a rt_sigprocmask per access): every program handler is reached through on_program_signal, which
 *   defers a signal arriving mid-step (or inside an agent critical section) and sends it again after.
 *
 * The program's own SIGSEGV/SIGTRAP/SIGSYS handlers are kept aside and called (forward) for faults that
 * are not ours; a fatal one is written to the stream first. Each thread gets an alternate signal stack
 * of the agent's, so the handlers still run when the program overflows its stack.
 *
 * What it gets wrong: on the routes that open a page (memory not moved, an instruction that cannot be
 * redirected), other threads' accesses to that page meanwhile are not seen (windows_at_risk counts them);
 * the other threads are not stopped; a push/pop whose stack slot is traced (a stack the program made in a
 * heap block) is one of those. On the trap-flag route (MEMTRACE_STEP=trap, no libZydis) a rep string
 * instruction whose source and destination share a page records only its loads (StepModesTest). An emulated cmps/scas computes CF/PF/AF/ZF/SF/OF by hand: ExactThreadsTest
 * checks a few cases against the CPU (a throwaway harness agreed on 16 M random pairs, not in the suite). A redirected copy that is interrupted by a synchronous signal of the
 * program (SIGFPE from SIMD) shows the program's handler the copy's address, as an out-of-line copy does. An out-of-line copy that raises SIGBUS or SIGFPE (a file mapping past
 * its end, an unmasked SIMD exception) shows the program's handler the copy's address, and x87 state saved
 * after it names the copy as the last FPU instruction. A program whose thread has no alternate stack of
 * its own but installs an SA_ONSTACK handler sees that handler run on the agent's alternate stack. A
 * signal deferred by an out-of-line step runs its handler from inside ool_finish, on the agent's OOL stack
 * (unless SA_ONSTACK), with an agent address in its context; more than 8 deferred at once are dropped.
 */
#include "agent.h"

/* rt_sigreturn for every handler the process has: dispatch would trap libc's restorer. */
__attribute__((naked, used)) void mt_restorer(void)
{
    __asm__ volatile("mov $15, %eax\n\tsyscall\n\thlt");
}


/* ------------------------------------------------------------------------------------------------ */
/* Signals                                                                                          */

void set_kernel_action(int sig, void *handler, unsigned long flags, uint64_t mask)
{
    struct ksigaction a = {handler, flags | KSA_RESTORER, (void *)mt_restorer, mask};
    mt_sys4(SYS_rt_sigaction, sig, &a, 0, 8);
}

#define ALT_STACK_SIZE (256 * 1024)
#define OOL_STACK_SIZE 262144 /* also runs program handlers of signals deferred by a step; a plain number for the stub */
#define MT_STR_(x) #x
#define MT_STR(x) MT_STR_(x)
/* This thread's alternate stack for the agent's handlers, and below it the stack mt_ool_return calls  */
/* C on: a program close to overflowing its stack must not overflow it inside the agent, with a lock  */
/* held. Mapped once per thread, kept until the process ends.                                          */
int give_alt_stack(void)
{
    if (!ts.alt.ss_sp) {
        unsigned char *p = agent_map(OOL_STACK_SIZE + ALT_STACK_SIZE);
        if (!p) return 0;
        mt_ool_stack = (uintptr_t)p + OOL_STACK_SIZE;
        ts.alt = (stack_t){.ss_sp = p + OOL_STACK_SIZE, .ss_flags = 0, .ss_size = ALT_STACK_SIZE};
    }
    return 1;
}

/* The pages of this thread's step lose their rights again. Lock not held. */
static void close_step_pages(void)
{
    if (!ts.nstep) return;
    spin_lock(&g.lock);
    for (int i = 0; i < ts.nstep; i++) close_locked(ts.step_pages[i], ts.step_pages[i] + g.page);
    spin_unlock(&g.lock);
    ts.nstep = 0;
}

/* A redirected step is over (its copy ran or will not run again): fork may go on. */
static void end_redirect(void)
{
    if (!ts.ool_scratch) return;
    ts.ool_scratch = 0;
    __atomic_sub_fetch(&g.redirected, 1, __ATOMIC_RELEASE);
}

/* Ends the step of this thread from a signal handler (the trap, or a signal we forward mid-step). */
static void end_step(ucontext_t *uc)
{
    greg_t *gr = uc->uc_mcontext.gregs;
    close_step_pages();
    if (ts.stepping == STEP_TRAP) {
        gr[REG_EFL] &= ~EFLAGS_TF;
        mt_memcpy(&uc->uc_sigmask, &ts.step_saved_mask, 8);
    }
    /* The copy faulted and did nothing: the program sees the fault at its own instruction, with its own */
    /* register where a redirected copy had borrowed one.                                              */
    if (ts.stepping == STEP_OOL && (uintptr_t)gr[REG_RIP] == ts.ool_slot) {
        gr[REG_RIP] = (greg_t)ts.ool_ip;
        if (ts.ool_scratch) gr[ts.ool_scratch - 1] = (greg_t)mt_scratch_save;
    }
    end_redirect();
    ts.stepping = STEP_NONE;
    count(&g.steps);
}

/* The kernel's handler of every signal the program handles (but the agent's three): the program's     */
/* handler runs now, or, when the signal arrived in the middle of an out-of-line step (its pages open,   */
/* the copy not yet run or its pages not yet closed), once the step is over. Blocking the signals for   */
/* the step instead would cost a rt_sigprocmask per access, since the step ends without a signal.       */
void on_program_signal(int sig, siginfo_t *si, void *ucv)
{
    ucontext_t *uc = ucv;
    struct ksigaction *a = &g.app_action[sig];
    int synchronous = si->si_code > 0 && (sig == SIGBUS || sig == SIGFPE || sig == SIGILL);
    if ((ts.stepping == STEP_OOL || ts.critical) && !synchronous) {
        if (ts.ndeferred < (int)(sizeof ts.deferred / sizeof ts.deferred[0])) mt_memcpy(&ts.deferred[ts.ndeferred++], si, sizeof *si);
        /* the kernel has already reset a one-shot action: the redelivery must still reach the handler */
        if (a->flags & SA_RESETHAND) install_program_action(sig);
        return;
    }
    /* The copy raised it (a file mapping past its end, a SIMD exception): the step ends here. */
    if (ts.stepping == STEP_OOL) end_step(uc);
    void *h = a->handler;
    unsigned long flags = a->flags;
    if (flags & SA_RESETHAND) {
        a->handler = SIG_DFL;
        a->flags = 0;
    }
    if (h == SIG_DFL || h == SIG_IGN) return; /* changed since this delivery began */
    if (flags & SA_SIGINFO) ((void (*)(int, siginfo_t *, void *))h)(sig, si, uc);
    else ((void (*)(int))h)(sig);
}

/* What the kernel does for `sig` from the program's action in g.app_action: a handler goes through  */
/* on_program_signal and returns through our restorer; SIG_DFL and SIG_IGN are the kernel's own.      */
long install_program_action(int sig)
{
    struct ksigaction k = g.app_action[sig];
    if (k.handler != SIG_DFL && k.handler != SIG_IGN) {
        k.handler = (void *)on_program_signal;
        k.flags |= SA_SIGINFO | KSA_RESTORER;
        k.restorer = (void *)mt_restorer;
        k.mask &= ~OUR_SIGNALS;
    }
    return mt_sys4(SYS_rt_sigaction, sig, &k, 0, 8);
}

/* Ends an out-of-line step: mt_ool_return calls it after the copy ran, on the thread's OOL stack with  */
/* the program's signal mask. A signal arriving before the step is marked over is deferred by          */
/* on_program_signal, so none runs a program handler while g.lock is held or pages are open; the ones   */
/* deferred are sent again at the end. No system call here but the mprotect of the close.              */
__attribute__((used)) static uintptr_t ool_finish(void)
{
    uintptr_t resume = ts.ool_resume;
    close_step_pages();
    end_redirect();
    __atomic_store_n(&ts.stepping, STEP_NONE, __ATOMIC_SEQ_CST); /* a signal handler reads it */
    count(&g.steps);
    if (ts.ndeferred) redeliver_deferred();
    return resume;
}

/* Where every out-of-line copy jumps after its instruction. It starts on the program's stack: steps    */
/* over the red zone, keeps a slot for the resume address, saves the flags and the registers the C ABI  */
/* lets ool_finish clobber there, then moves to the thread's OOL stack (if it has one) to save the     */
/* x87/SSE state (the agent is built without AVX, so the upper halves of the */
/* vector registers are never touched), and leaves with ret $128: the program's registers, flags and    */
/* stack pointer exactly as the instruction left them.                                                   */
__asm__(".text\n"
        ".globl mt_ool_return\n"
        ".hidden mt_ool_return\n"
        ".type mt_ool_return, @function\n"
        ".p2align 4\n"
        "mt_ool_return:\n"
        "\tendbr64\n"
        "\tlea -136(%rsp), %rsp\n"
        "\tpushfq\n"
        "\tpush %rax\n\tpush %rcx\n\tpush %rdx\n\tpush %rsi\n\tpush %rdi\n"
        "\tpush %r8\n\tpush %r9\n\tpush %r10\n\tpush %r11\n\tpush %rbx\n"
        "\tmov %rsp, %rbx\n"
        "\tmov mt_ool_stack@gottpoff(%rip), %rax\n"
        "\tmov %fs:(%rax), %rax\n"
        "\ttest %rax, %rax\n"
        "\tjz 1f\n"
        /* Already on the OOL stack (a program handler run from ool_finish stepped): go on below. */
        "\tcmp %rax, %rbx\n"
        "\tjae 2f\n"
        "\tlea -" MT_STR(OOL_STACK_SIZE) "(%rax), %rcx\n"
        "\tcmp %rcx, %rbx\n"
        "\tja 1f\n"
        "2:\n"
        "\tmov %rax, %rsp\n"
        "1:\n"
        "\tand $-16, %rsp\n"
        "\tsub $512, %rsp\n"
        "\tfxsave64 (%rsp)\n"
        "\tcld\n"
        "\tcall ool_finish\n"
        "\tmov %rax, 88(%rbx)\n" /* the slot above the flags: 10 registers + flags = 88 bytes */
        "\tfxrstor64 (%rsp)\n"
        "\tmov %rbx, %rsp\n"
        "\tpop %rbx\n\tpop %r11\n\tpop %r10\n\tpop %r9\n\tpop %r8\n"
        "\tpop %rdi\n\tpop %rsi\n\tpop %rdx\n\tpop %rcx\n\tpop %rax\n"
        "\tpopfq\n"
        "\tret $128\n"
        ".size mt_ool_return, . - mt_ool_return\n");

/* A signal that is not the agent's business: give it to the program's handler, or die of it. */
void forward(int sig, siginfo_t *si, ucontext_t *uc)
{
    if (ts.stepping) end_step(uc);
    struct ksigaction *a = &g.app_action[sig];
    if (a->handler != SIG_DFL && a->handler != SIG_IGN) {
        void *h = a->handler;
        unsigned long flags = a->flags;
        if (flags & SA_RESETHAND) a->handler = SIG_DFL;
        /* The program's handler is program code (it may even siglongjmp away): not our handler. */
        int depth = ts.in_handler;
        ts.in_handler = 0;
        if (flags & SA_SIGINFO) ((void (*)(int, siginfo_t *, void *))h)(sig, si, uc);
        else ((void (*)(int))h)(sig);
        ts.in_handler = depth;
        return;
    }
    /* Default action: the program dies of this signal. run --check words a fault first (as ASan would); */
    /* then say so in the stream. */
    if (chk.on && (sig == SIGSEGV || sig == SIGBUS)) check_segv(sig, si, uc);
    /* Only a fault has an address (0 for a null pointer); a signal sent with kill() carries the sender's */
    /* pid there, so it is reported as "no address": all ones. */
    uint64_t fault_address = si->si_code > 0 ? (uint64_t)si->si_addr : ~0ULL;
    emit_stats_and_exit(MT_EXIT_SIGNAL, (uint64_t)sig, (uint64_t)uc->uc_mcontext.gregs[REG_RIP], fault_address, NULL);
    set_kernel_action(sig, SIG_DFL, 0, 0);
    uint64_t m;
    mt_memcpy(&m, &uc->uc_sigmask, 8);
    m &= ~sigbit(sig);
    mt_memcpy(&uc->uc_sigmask, &m, 8);
    mt_sys3(SYS_tgkill, g.pid, mytid(), sig);
}


static void segv_access(int sig, siginfo_t *si, void *ucv);
static void begin_step(ucontext_t *uc, uintptr_t addr);
static void begin_trap_step(ucontext_t *uc);
static uintptr_t branch_operand(const struct insn *e, const greg_t *gr, uintptr_t addr);
static int emulate_branch(ucontext_t *uc, const struct insn *e, uintptr_t addr, intptr_t delta);
SIGNAL_HANDLER(on_segv, segv_access, PROF_SEGV)

/* One element of a string instruction: 1 with the alias's delta when it lies in moved memory the      */
/* program may access that way, 1 with *traced 0 when none of it is traced (the stack: get_element and  */
/* put_element go through the kernel then), 0 when the CPU must do it. Lock held.                      */
static int reach_element(uintptr_t x, size_t n, int need, intptr_t *delta, int *traced)
{
    struct range *r1 = set_find(x), *r2 = set_find(x + n - 1);
    *traced = r1 || r2;
    *delta = 0;
    if (!*traced) return 1;
    if ((r1 && (r1->prot & need) != need) || (r2 && (r2->prot & need) != need)) return 0;
    *delta = alias_delta(x, x + n);
    return *delta != 0;
}

/* The records the trap-flag route makes for one element: one per traced page it touches, each after the */
/* first of the iteration marked SAME_STEP. Returns how many. Lock held.                               */
static int record_element(uintptr_t ip, uintptr_t x, size_t n, int write, int before)
{
    int made = 0;
    uintptr_t pages[2] = {x, page_down(x + n - 1)};
    for (int i = 0; i < (pages[1] != page_down(x) ? 2 : 1); i++) {
        if (!set_find(pages[i])) continue;
        count(&g.faults);
        REC(MT_ACCESS, struct mt_access, a);
        a.h.flags = (uint8_t)((write ? MT_ACC_WRITE : 0) | (before + made ? MT_ACC_SAME_STEP : 0));
        a.ip = ip;
        a.addr = pages[i];
        emit(&a);
        made++;
    }
    return made;
}

static uint64_t load_n(uintptr_t a, int n)
{
    switch (n) {
    case 1: return *(volatile uint8_t *)a;
    case 2: return *(volatile uint16_t *)a;
    case 4: return *(volatile uint32_t *)a;
    default: return *(volatile uint64_t *)a;
    }
}

static void store_n(uintptr_t a, int n, uint64_t v)
{
    switch (n) {
    case 1: *(volatile uint8_t *)a = (uint8_t)v; break;
    case 2: *(volatile uint16_t *)a = (uint16_t)v; break;
    case 4: *(volatile uint32_t *)a = (uint32_t)v; break;
    default: *(volatile uint64_t *)a = v;
    }
}

/* An element's value: through the alias when traced, else through the kernel, which answers memory the */
/* program could not read with an error (the CPU then does that element and faults as it must).        */
static int get_element(uintptr_t x, intptr_t delta, int traced, int n, uint64_t *v)
{
    *v = 0;
    if (traced) *v = load_n(x + (uintptr_t)delta, n);
    return traced || user_transfer(v, x, (size_t)n, 0) == 0;
}

static int put_element(uintptr_t x, intptr_t delta, int traced, int n, uint64_t v)
{
    if (traced) store_n(x + (uintptr_t)delta, n, v);
    return traced || user_transfer(&v, x, (size_t)n, 1) == 0;
}

/* The flags a cmp of two n-byte values leaves (a - b): CF, PF, AF, ZF, SF and OF, the rest as they were. */
static greg_t compare_flags(greg_t efl, uint64_t a, uint64_t b, int n)
{
    int bits = 8 * n;
    uint64_t mask = bits == 64 ? ~0ULL : (1ULL << bits) - 1;
    a &= mask;
    b &= mask;
    uint64_t r = (a - b) & mask;
    uint64_t f = (uint64_t)efl & ~(uint64_t)(0x1 | 0x4 | 0x10 | 0x40 | 0x80 | 0x800);
    if (a < b) f |= 0x1;                                           /* CF */
    if (!(__builtin_popcount((unsigned)(r & 0xff)) & 1)) f |= 0x4; /* PF: even parity of the low byte */
    if ((a ^ b ^ r) & 0x10) f |= 0x10;                             /* AF: borrow out of bit 3 */
    if (r == 0) f |= 0x40;                                         /* ZF */
    if ((r >> (bits - 1)) & 1) f |= 0x80;                          /* SF */
    if ((((a ^ b) & (a ^ r)) >> (bits - 1)) & 1) f |= 0x800;       /* OF */
    return (greg_t)f;
}

/* movs/stos/lods/cmps/scas (rep or not) on moved memory, element by element through the alias, recorded */
/* as the trap-flag route records them (per element: the access at rsi, then the one at rdi). cmps and  */
/* scas set the flags as the CPU's compare does, and a repe/repne ends on them. Stops before an element */
/* it cannot reach that way (the instruction resumes there natively and faults if it must) and after     */
/* 4096 elements (g.lock is not held longer; the rest faults again: a restarted rep instruction checks  */
/* rcx only). Returns the elements done. Lock held.                                                     */
static long emulate_string_locked(greg_t *gr, const struct insn *e)
{
    uintptr_t ip = (uintptr_t)gr[REG_RIP];
    long step = (gr[REG_EFL] & 0x400) ? -(long)e->elem : (long)e->elem; /* DF */
    int k = e->string;
    int uses_si = k == STR_MOVS || k == STR_LODS || k == STR_CMPS, uses_di = k != STR_LODS;
    int writes_di = k == STR_MOVS || k == STR_STOS;
    long done = 0;
    int over = 0;
    while (done < 4096 && !(e->rep && gr[REG_RCX] == 0)) {
        uintptr_t src = (uintptr_t)gr[REG_RSI], dst = (uintptr_t)gr[REG_RDI];
        intptr_t sd = 0, dd = 0;
        int st = 0, dt = 0;
        if (uses_si && !reach_element(src, e->elem, PROT_READ, &sd, &st)) break;
        if (uses_di && !reach_element(dst, e->elem, writes_di ? PROT_WRITE : PROT_READ, &dd, &dt)) break;
        if (!st && !dt) break; /* past the traced memory: the CPU goes on natively, faster */
        uint64_t v = 0, w = 0;
        if (uses_si && !get_element(src, sd, st, e->elem, &v)) break;
        if ((k == STR_CMPS || k == STR_SCAS) && !get_element(dst, dd, dt, e->elem, &w)) break;
        if (k == STR_MOVS && !put_element(dst, dd, dt, e->elem, v)) break;
        if (k == STR_STOS && !put_element(dst, dd, dt, e->elem, (uint64_t)gr[REG_RAX])) break;
        if (!ts.untraced) {
            int made = st ? record_element(ip, src, e->elem, 0, 0) : 0;
            if (dt) record_element(ip, dst, e->elem, writes_di, made);
        }
        if (k == STR_CMPS) gr[REG_EFL] = compare_flags(gr[REG_EFL], v, w, e->elem);
        else if (k == STR_SCAS) gr[REG_EFL] = compare_flags(gr[REG_EFL], (uint64_t)gr[REG_RAX], w, e->elem);
        else if (k == STR_LODS && e->elem >= 4) gr[REG_RAX] = (greg_t)v; /* a 32-bit load clears the upper half */
        else if (k == STR_LODS) gr[REG_RAX] = (greg_t)(((uint64_t)gr[REG_RAX] & ~((1ULL << (8 * e->elem)) - 1)) | v);
        if (uses_si) gr[REG_RSI] += step;
        if (uses_di) gr[REG_RDI] += step;
        if (e->rep) gr[REG_RCX]--;
        done++;
        int zf = (gr[REG_EFL] & 0x40) != 0;
        if (!e->rep || gr[REG_RCX] == 0 || ((k == STR_CMPS || k == STR_SCAS) && (e->rep == REP_E ? !zf : zf))) {
            over = 1;
            break;
        }
    }
    if (over) gr[REG_RIP] += e->len;
    return done;
}

/* The record of a step that opens nothing: the faulting access, and the second page of an operand that   */
/* straddles two traced pages (second, or 0). Nothing is recorded for the agent's own untraced work.      */
static void record_step(uintptr_t ip, uintptr_t addr, int write, uintptr_t second)
{
    if (ts.untraced) {
        count(&g.untraced_faults);
        return;
    }
    count(&g.faults);
    REC(MT_ACCESS, struct mt_access, a);
    a.h.flags = (uint8_t)(write ? MT_ACC_WRITE : 0);
    a.ip = ip;
    a.addr = addr;
    emit(&a);
    if (second) {
        count(&g.faults);
        a.h.flags |= MT_ACC_SAME_STEP;
        a.addr = second;
        emit(&a);
    }
}

/* push/pop of a memory operand on moved memory: the operand through the alias, the stack slot in place  */
/* (it must be untraced), recorded as the open route records them: the operand's access at the fault    */
/* address, and its other traced page if it spans two (SAME_STEP). 0 when it must take the open route   */
/* (the stack slot traced, the operand not wholly reachable through an alias, the slot unwritable).    */
/* Lock held.                                                                                          */
static int emulate_stack_locked(greg_t *gr, const struct insn *e, uintptr_t ea, uintptr_t addr, int write)
{
    int push = e->stack == STK_PUSH;
    uintptr_t rsp = (uintptr_t)gr[REG_RSP], slot = push ? rsp - 8 : rsp;
    intptr_t delta = 0;
    int traced = 0;
    if (set_find(slot) || set_find(slot + 7) || !reach_element(ea, 8, push ? PROT_READ : PROT_WRITE, &delta, &traced))
        return 0;
    /* The page rsp points into is taken to be mapped, as the CPU's own access would need; the slot on  */
    /* another page (a push at a page boundary: stack growth) goes through the kernel, which answers an */
    /* unmapped one with an error instead of a fault here.                                              */
    int in_place = page_down(slot) == page_down(rsp) && page_down(slot + 7) == page_down(rsp);
    uint64_t v;
    if (push) {
        v = load_n(ea + (uintptr_t)delta, 8);
        if (in_place) *(volatile uint64_t *)slot = v;
        else if (user_transfer(&v, slot, 8, 1)) return 0;
    } else {
        if (in_place) v = *(volatile uint64_t *)slot;
        else if (user_transfer(&v, slot, 8, 0)) return 0;
        store_n(ea + (uintptr_t)delta, 8, v);
    }
    uintptr_t second = page_down(ea + 7);
    record_step((uintptr_t)gr[REG_RIP], addr, write, second > page_down(addr) && set_find(second) ? second : 0);
    gr[REG_RSP] = (greg_t)(push ? rsp - 8 : rsp + 8);
    gr[REG_RIP] += e->len;
    return 1;
}

/* Access stacks (docs/stacks.md, "Access stacks"): with --stack-depth N > 1, the return addresses above the  */
/* faulting instruction's frame, unwound from the fault's registers as an allocation's are (mt_unwind: the   */
/* row of the instruction itself, then each caller's), sent as an MT_CONTEXT when they are not the ones this */
/* thread sent last: a loop's accesses share one. The stack read is the thread's (below __libc_stack_end or  */
/* its descriptor), never traced memory; a fault on another stack (a signal handler's, a coroutine's) sends  */
/* an empty context. Called with g.lock held, for a fault that is recorded.                                  */
static void send_context(const greg_t *gr)
{
    uint64_t out[MT_STACK_MAX_CONTEXT];
    int n = 0, max = g.stack_depth - 1 < MT_STACK_MAX_CONTEXT ? g.stack_depth - 1 : MT_STACK_MAX_CONTEXT;
    uintptr_t ip = (uintptr_t)gr[REG_RIP], sp = (uintptr_t)gr[REG_RSP], tp, hi = 0, end = (uintptr_t)__libc_stack_end;
    __asm__("mov %%fs:0, %0" : "=r"(tp));
    if (end > sp && end - sp < (1UL << 30)) hi = end;
    else if (tp > sp && tp - sp < (1UL << 30)) hi = tp;
    /* mt_unwind looks a return address's row up one byte before it: ip + 1 finds the instruction's own */
    if (hi) n = mt_unwind(ip + 1, sp, (uintptr_t)gr[REG_RBP], sp, hi, out, max);
    if (ts.ctx_sent && n == ts.nctx) {
        int same = 1;
        for (int i = 0; i < n && same; i++) same = out[i] == ts.ctx[i];
        if (same) return;
    }
    struct mt_context c;
    c.h.type = MT_CONTEXT;
    c.h.flags = 0;
    c.h.size = (uint16_t)(sizeof c.h + 8 * n);
    for (int i = 0; i < n; i++) c.callers[i] = ts.ctx[i] = out[i];
    ts.nctx = n;
    ts.ctx_sent = 1;
    emit(&c);
}

static void segv_access(int sig, siginfo_t *si, void *ucv)
{
    ucontext_t *uc = ucv;
    greg_t *gr = uc->uc_mcontext.gregs;
    uintptr_t addr = (uintptr_t)si->si_addr;
    if (!g.active || si->si_code != SEGV_ACCERR) { forward(sig, si, uc); return; }
    if (gr[REG_ERR] & PF_FETCH_BIT) { forward(sig, si, uc); return; }
    if (ts.dispatch_on && ts.selector == SUD_ALLOW && !ts.native_pending) ts.selector = SUD_BLOCK;
    int write = (gr[REG_ERR] & PF_WRITE_BIT) != 0;
    /* memtrace run --check: the access against the shadow first (it may report and end the run) */
    if (chk.on && g.recording && !ts.untraced) {
        if (heap_owns((void *)addr)) check_fault(uc, addr, write);
        else if (!ts.stepping && check_global_owns(addr)) {
            uintptr_t ip = (uintptr_t)gr[REG_RIP];
            check_global_fault(uc, addr, ip, check_in_libc(ip));
        }
    }
    /* Redirected (see below): decided before g.lock, since the code cache's lock is a leaf. The       */
    /* allocator's touches of a single-threaded program take the open page instead: nobody else can   */
    /* slip through, and a page opened for the whole wrapper costs fewer faults.                        */
    struct insn *e = NULL;
    uintptr_t ea = 0;
    if (g.aliases && g.recording && !ts.stepping && (!ts.untraced || g.threads > 1)) {
        e = cache_lookup((uintptr_t)gr[REG_RIP]);
        if (e && e->rslot) {
            ea = operand_address(e, gr);
            if (addr < ea || addr - ea >= e->opsize) e = NULL; /* not the operand we know: the old route */
        } else if (e && (e->how == RUN_JMP || e->how == RUN_CALL)) {
            ea = branch_operand(e, gr, addr);
            if (!ea) e = NULL;
        } else if (e && e->string) {
            /* emulated below: its operands come from rsi/rdi */
        } else if (e && e->stack) {
            /* emulated below; a pop based on rsp addresses its operand with rsp already past the value */
            ea = operand_address(e, gr) + (e->stack == STK_POP && e->base == REG_RSP ? 8 : 0);
            if (addr < ea || addr - ea >= 8) e = NULL; /* the stack slot faulted: the old route */
        } else {
            e = NULL;
        }
    }
    spin_lock(&g.lock);
    struct range *r = set_find(addr);
    if (r && !g.recording && (r->prot & (write ? PROT_WRITE : PROT_READ))) {
        /* raised just before memtrace_stop gave the page its rights back: the access can simply run */
        spin_unlock(&g.lock);
        return;
    }
    if (!r && alias_delta(page_down(addr), page_down(addr) + 1) &&
        (ts.retry_ip != (uintptr_t)gr[REG_RIP] || ts.retry_addr != addr)) {
        /* memory being moved onto a memfd was read-only for the move, which is over now: try again */
        ts.retry_ip = (uintptr_t)gr[REG_RIP];
        ts.retry_addr = addr;
        spin_unlock(&g.lock);
        return;
    }
    ts.retry_ip = 0;
    if (!r || !g.recording || !(r->prot & (write ? PROT_WRITE : PROT_READ))) {
        spin_unlock(&g.lock);
        forward(sig, si, uc);
        return;
    }
    if (g.stack_depth > 1 && !ts.untraced && !ts.stepping) send_context(gr);
    if (e && e->string) {
        long done = emulate_string_locked(gr, e);
        spin_unlock(&g.lock);
        if (done) {
            __atomic_add_fetch(&g.steps, (uint64_t)done, __ATOMIC_RELAXED);
            return;
        }
        /* not one element reachable through an alias: one step on the open route */
        e = NULL;
        spin_lock(&g.lock);
    }
    if (e && e->stack) {
        int done = emulate_stack_locked(gr, e, ea, addr, write);
        spin_unlock(&g.lock);
        if (done) {
            count(&g.steps);
            return;
        }
        e = NULL;
        spin_lock(&g.lock);
    }
    intptr_t delta = 0;
    uintptr_t second = 0; /* the operand's other traced page, faulted on in the same step on the old route */
    if (e) {
        int branch = e->how == RUN_JMP || e->how == RUN_CALL;
        int need = branch ? PROT_READ : e->access ? e->access : (write ? PROT_WRITE : PROT_READ);
        size_t size = branch ? 8 : e->opsize;
        uintptr_t p1 = page_down(ea), p2 = page_down(ea + size - 1);
        struct range *r1 = set_find(p1), *r2 = p2 != p1 ? set_find(p2) : NULL;
        delta = alias_delta(ea, ea + size);
        if ((r1 && (r1->prot & need) != need) || (r2 && (r2->prot & need) != need)) delta = 0;
        if (r2 && p2 > page_down(addr)) second = p2;
    }
    if (delta && (e->how == RUN_JMP || e->how == RUN_CALL)) { /* the target is read through the alias */
        spin_unlock(&g.lock);
        if (!ts.untraced) {
            count(&g.faults);
            REC(MT_ACCESS, struct mt_access, a);
            a.ip = (uintptr_t)gr[REG_RIP];
            a.addr = addr;
            emit(&a);
        }
        if (emulate_branch(uc, e, addr, delta)) return;
        /* a call whose return address cannot be pushed from here: it runs with its page open */
        spin_lock(&g.lock);
        if (!open_locked(page_down(addr), page_down(addr) + g.page)) {
            stop_for_memory_locked(); /* the call runs again, everything open */
            spin_unlock(&g.lock);
            return;
        }
        spin_unlock(&g.lock);
        ts.step_pages[ts.nstep++] = page_down(addr);
        begin_trap_step(uc);
        return;
    }
    if (delta) {
        /* Redirected: the copy of the instruction reaches the operand through the always-open alias   */
        /* view; nothing is opened, so no other thread can slip through while it runs.                 */
        __atomic_add_fetch(&g.redirected, 1, __ATOMIC_ACQUIRE);
        spin_unlock(&g.lock);
        uintptr_t ip = (uintptr_t)gr[REG_RIP];
        record_step(ip, addr, write, second);
        ts.stepping = STEP_OOL;
        ts.ool_ip = ip;
        ts.ool_slot = (uintptr_t)e->rslot;
        ts.ool_resume = ip + e->len;
        ts.ool_scratch = e->scratch + 1;
        mt_scratch_save = (uint64_t)gr[e->scratch];
        gr[e->scratch] = (greg_t)(ea + (uintptr_t)delta);
        gr[REG_RIP] = (greg_t)e->rslot;
        return;
    }
    uintptr_t page = page_down(addr);
    if (ts.untraced) { /* the allocator or a block operation working for the program */
        if (ts.nlazy == (int)(sizeof ts.lazy_pages / sizeof ts.lazy_pages[0])) {
            /* a big job: close what it opened so far; it faults again where it still needs to go */
            for (int i = 0; i < ts.nlazy; i++) close_locked(ts.lazy_pages[i], ts.lazy_pages[i] + g.page);
            ts.nlazy = 0;
        }
        if (!open_locked(page, page + g.page)) {
            stop_for_memory_locked();
            spin_unlock(&g.lock);
            return;
        }
        ts.lazy_pages[ts.nlazy++] = page;
        count(&g.untraced_faults);
        spin_unlock(&g.lock);
        return;
    }
    if (ts.nstep == (int)(sizeof ts.step_pages / sizeof ts.step_pages[0])) {
        spin_unlock(&g.lock);
        forward(sig, si, uc);
        return;
    }
    if (!open_locked(page, page + g.page)) {
        stop_for_memory_locked(); /* the instruction runs again, everything open, unrecorded */
        spin_unlock(&g.lock);
        return;
    }
    spin_unlock(&g.lock);
    ts.step_pages[ts.nstep++] = page;
    count(&g.faults);
    REC(MT_ACCESS, struct mt_access, a);
    a.h.flags = (uint8_t)((write ? MT_ACC_WRITE : 0) | (ts.stepping ? MT_ACC_SAME_STEP : 0));
    a.ip = ts.stepping == STEP_OOL ? ts.ool_ip : (uint64_t)gr[REG_RIP];
    a.addr = addr;
    emit(&a);
    if (!ts.stepping) begin_step(uc, addr);
}

/* The operand address of an emulated jmp/call: 8 bytes within the faulting page, or 0 (let the CPU    */
/* fault on each page, as it does with the trap).                                                      */
static uintptr_t branch_operand(const struct insn *e, const greg_t *gr, uintptr_t addr)
{
    uintptr_t ea = (uintptr_t)e->disp;
    if (e->base >= 0) ea += (uintptr_t)gr[e->base];
    if (e->index >= 0) ea += (uintptr_t)gr[e->index] * e->scale;
    return page_down(ea) == page_down(addr) && page_down(ea + 7) == page_down(addr) ? ea : 0;
}

/* jmp/call through traced memory: read the target while the page is open, push the return address,   */
/* and the instruction is done without running it. 0 when it must run after all.                       */
static int emulate_branch(ucontext_t *uc, const struct insn *e, uintptr_t addr, intptr_t delta)
{
    greg_t *gr = uc->uc_mcontext.gregs;
    uintptr_t ea = branch_operand(e, gr, addr);
    if (!ea) return 0;
    uintptr_t ret_at = (uintptr_t)gr[REG_RSP] - 8;
    if (e->how == RUN_CALL) {
        /* Traced memory under the stack pointer would have to fault: let it. */
        spin_lock(&g.lock);
        int traced = set_find(ret_at) != NULL;
        spin_unlock(&g.lock);
        if (traced) return 0;
    }
    uint64_t target = *(const volatile uint64_t *)(ea + (uintptr_t)delta); /* page open, or through the alias */
    /* Our handlers run on an alternate stack. A push within the page the stack pointer is in is a plain */
    /* store; one onto the page below goes through the kernel, which answers an overflowing stack with   */
    /* an error instead of a fault here, and then the instruction runs after all.                       */
    uint64_t back = (uint64_t)gr[REG_RIP] + e->len;
    if (e->how == RUN_CALL) {
        if (page_down(ret_at) == page_down((uintptr_t)gr[REG_RSP])) *(volatile uint64_t *)ret_at = back;
        else if (user_transfer(&back, ret_at, 8, 1)) return 0;
    }
    close_step_pages();
    count(&g.steps);
    if (e->how == RUN_CALL) gr[REG_RSP] = (greg_t)ret_at;
    gr[REG_RIP] = (greg_t)target;
    return 1;
}

/* The first fault of an instruction: its page is open; now let the instruction run, with asynchronous */
/* signals blocked until it is done. Emulated, out of line, or with the trap flag.                      */
static void begin_step(ucontext_t *uc, uintptr_t addr)
{
    greg_t *gr = uc->uc_mcontext.gregs;
    uintptr_t ip = (uintptr_t)gr[REG_RIP];
    struct insn *e = cache_lookup(ip);
    if (e && (e->how == RUN_JMP || e->how == RUN_CALL) && emulate_branch(uc, e, addr, 0)) return;
    if (e && e->how == RUN_OOL) { /* signals that arrive meanwhile wait in on_program_signal */
        ts.stepping = STEP_OOL;
        ts.ool_scratch = 0;
        ts.ool_ip = ip;
        ts.ool_slot = (uintptr_t)e->slot;
        ts.ool_resume = ip + e->len;
        gr[REG_RIP] = (greg_t)e->slot;
    } else {
        begin_trap_step(uc);
    }
}

/* The instruction runs in place with the trap flag; asynchronous signals wait, blocked in the frame's */
/* mask, until the trap.                                                                              */
static void begin_trap_step(ucontext_t *uc)
{
    mt_memcpy(&ts.step_saved_mask, &uc->uc_sigmask, 8);
    uint64_t only_sync = ~(OUR_SIGNALS | sigbit(SIGBUS) | sigbit(SIGFPE) | sigbit(SIGILL));
    mt_memcpy(&uc->uc_sigmask, &only_sync, 8);
    ts.stepping = STEP_TRAP;
    uc->uc_mcontext.gregs[REG_EFL] |= EFLAGS_TF;
}

void enable_dispatch(void);

static void trap_step(int sig, siginfo_t *si, void *ucv);
SIGNAL_HANDLER(on_trap, trap_step, PROF_TRAP)

static void trap_step(int sig, siginfo_t *si, void *ucv)
{
    ucontext_t *uc = ucv;
    greg_t *gr = uc->uc_mcontext.gregs;
    if (ts.native_pending && gr[REG_RAX] != 0) {
        /* back from a syscall we let run natively (the parent side of a clone) */
        ts.native_pending = 0;
        ts.selector = SUD_BLOCK;
        gr[REG_EFL] &= ~EFLAGS_TF;
        if (ts.native_thread && (long)gr[REG_RAX] < 0) __atomic_sub_fetch(&g.threads, 1, __ATOMIC_RELAXED);
        ts.native_thread = 0;
        if (ts.native_reprotect) {
            ts.native_reprotect = 0;
            spin_lock(&g.lock);
            close_all_locked();
            spin_unlock(&g.lock);
        }
        return;
    }
    if (ts.stepping == STEP_TRAP) {
        end_step(uc);
        return;
    }
    if (si->si_code == TRAP_TRACE && (gr[REG_EFL] & EFLAGS_TF)) {
        /* A new thread created by a natively run clone inherits the trap flag: it lands here first. */
        gr[REG_EFL] &= ~EFLAGS_TF;
        if (ts.native_pending) return; /* a vfork-like child sharing the parent's TLS: leave it alone */
        if (!ts.dispatch_on && g.active) {
            ts.tid = 0; /* counted in g.threads by the parent (run_natively) */
            enable_dispatch();
            /* clone(CLONE_VM) left the thread without an alternate stack: ours takes effect at the return */
            if (give_alt_stack()) uc->uc_stack = ts.alt;
            emit_thread(1, (uint64_t)g.clone_parent);
        }
        return;
    }
    forward(sig, si, uc);
}

