/*
 * agent.h: what the files of the fault-mode agent (libmemtrace-agent.so) share, and nothing else: the
 * per-thread and process state, the locks and their order, small helpers that must not come from libc,
 * and the functions one file offers the others. Nothing here is visible outside the library (it is
 * built with -fvisibility=hidden; only the wrappers and the public API in wrappers.c, traced.c and
 * init.c are exported).
 *
 * The files, by responsibility (each opens with a header saying what it does and what it gets wrong):
 *   state.c     the process state g, the real functions, each thread's ts; leave_critical
 *   init.c      start-up: attaching to the ring, the handlers, __libc_start_main
 *   ring.c      the shared-memory ring to memtrace: every record the agent writes goes through emit()
 *   traced.c    the traced set (page ranges and their rights), opening and closing pages, start/stop
 *   fault.c     the fault path: SIGSEGV/SIGTRAP handlers, the step of one instruction, mt_ool_return
 *   decode.c    Zydis, loaded at run time, and the code cache of out-of-line copies (zydis_abi.h)
 *   syscall.c   syscall user dispatch: the SIGSYS handler, fork, exec, exit (syscall.h: what its files share)
 *   syscall_table.c    the one table of system-call buffers, their openings and block records
 *   syscall_vectors.c  iovec arrays and msghdrs given to the kernel as copies naming alias addresses
 *   syscall_signals.c  the program's sigaction, sigprocmask, sigaltstack, emulated; fatal self-signals
 *   syscall_map.c      the traced set kept true to the memory map after munmap, mmap, mremap, brk, mprotect
 *   heap.c      the allocator behind malloc & co. while attached: blocks on a memfd, touched only through its alias
 *   wrappers.c  malloc & co., mmap & co., memcpy/memmove/memset, dlopen, __cxa_finalize
 *   modules.c   loaded objects and the memory map, reported at start and after dlopen
 *   limits.c    the program's RLIMIT_AS kept apart from the agent's space; raw-clone threads and io_uring refused
 *   check_run.c memtrace run --check: checked blocks, the fault-time heap check, leaks; reports through
 *               the compiled-in checker's report files (check/check_report.h lists them), linked in unchanged
 *   common/     what the agent shares with the runtime (common/mt_common.h): the maps parser, the module
 *               walk and its records, the boot arena, the string helpers, MT_ASSERT (-DMT_DEBUG)
 */
#ifndef MEMTRACE_AGENT_H
#define MEMTRACE_AGENT_H

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/socket.h>
#include <ucontext.h>
#include <unistd.h>
#include <sched.h>
#include <malloc.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/auxv.h>

#include "memtrace_stream.h"
#include "mt_native.h"
#include "mt_common.h"
#include "mt_wrapped.h"

#define EXPORT __attribute__((visibility("default")))

#ifndef PR_SET_SYSCALL_USER_DISPATCH
#define PR_SET_SYSCALL_USER_DISPATCH 59
#define PR_SYS_DISPATCH_OFF 0
#define PR_SYS_DISPATCH_ON 1
#endif
#ifndef PR_SET_PDEATHSIG
#define PR_SET_PDEATHSIG 1
#endif
#ifndef SS_AUTODISARM
#define SS_AUTODISARM (1U << 31)
#endif
#define SUD_ALLOW 0
#define SUD_BLOCK 1
#define SYS_USER_DISPATCH_CODE 2 /* si_code of a dispatch SIGSYS */
#define EFLAGS_TF 0x100UL
#define PF_WRITE_BIT 0x2UL
#define PF_FETCH_BIT 0x10UL


struct ksigaction {
    void *handler;
    unsigned long flags;
    void *restorer;
    uint64_t mask;
};
#define KSA_RESTORER 0x04000000UL

/* The statistics are bumped by every thread, some of them outside any lock. */
static inline void count(volatile uint64_t *counter) { __atomic_add_fetch(counter, 1, __ATOMIC_RELAXED); }

static inline uint64_t sigbit(int sig) { return 1ULL << (sig - 1); }
/* The three signals the agent lives on; the program may never block them. */
#define OUR_SIGNALS (sigbit(SIGSEGV) | sigbit(SIGTRAP) | sigbit(SIGSYS))

/* Memory for the agent's own tables: straight from the kernel, never from the traced allocator. */
static inline void *agent_map(size_t n) { return mt_map_pages(n); }

/* ------------------------------------------------------------------------------------------------ */
/* Locks: spinlocks, never held across a call into the program or libc.                               */
/*                                                                                                  */
/*   g.lock       the traced set, the openings, the signal-stack list (traced.c; taken everywhere)   */
/*   g.ring_lock  the ring's tail (ring.c)                                                          */
/*   cc.lock      adding code-cache entries and slots (decode.c)                                     */
/*   heap.lock    the agent's allocator (heap.c)                                                     */
/*                                                                                                  */
/* Lock order: heap.lock before g.lock (the heap joins the traced set as it grows; fork takes         */
/* heap.lock before g.lock); g.lock before g.ring_lock (the traced set emits range records while it changes); */
/* cc.lock is a leaf, taken with neither of the others held and taking none. No other nesting.       */
/*                                                                                                  */
/* Each lock is taken inside one of our handlers (their sa_mask blocks the asynchronous signals) or   */
/* inside a critical section (enter_critical: the program's handlers wait), or during an out-of-line  */
/* step (which defers them too), so a thread never re-enters a lock it holds from a handler.          */
/*                                                                                                  */
/* THE RULE: no traced memory is touched while a lock is held. Touching it faults into segv_access,   */
/* which takes g.lock: on the same thread that spins forever. Program memory is read or written with   */
/* the locks released, after opening it (open_locked / open_span), or through the kernel              */
/* (user_transfer), which answers a protected page with EFAULT instead of a fault.                    */

typedef struct { volatile int v; } spinlock;
static inline void spin_lock(spinlock *l)
{
    while (__atomic_exchange_n(&l->v, 1, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(&l->v, __ATOMIC_RELAXED)) __builtin_ia32_pause();
    }
}
static inline void spin_unlock(spinlock *l) { __atomic_store_n(&l->v, 0, __ATOMIC_RELEASE); }


/* ------------------------------------------------------------------------------------------------ */
/* State                                                                                            */

struct thread_state {
    volatile char selector;      /* syscall user dispatch: SUD_BLOCK sends syscalls to SIGSYS */
    int tid;
    int dispatch_on;
    int untraced;                /* depth of wrappers whose memory touches are not the program's */
    int stepping;                /* STEP_*: pages are open for one instruction */
    int nstep;
    uintptr_t step_pages[8];
    uint64_t step_saved_mask;    /* STEP_TRAP: the program's signal mask, blocked for the step */
    uintptr_t ool_ip;            /* STEP_OOL: the instruction's own address, */
    uintptr_t ool_slot;          /* ...the copy that runs in its place, */
    uintptr_t ool_resume;        /* ...and where the program goes on afterwards */
    int ool_scratch;             /* a redirected copy: 1 + the greg it borrowed (its value in mt_scratch_save), or 0 */
    int nlazy;
    uintptr_t lazy_pages[64];
    uintptr_t retry_ip, retry_addr; /* an untraced fault retried once: moved memory was read-only meanwhile */
    int native_pending;          /* one syscall is being run natively; the trap brings us back */
    int native_reprotect;        /* ...and everything was opened for it (vfork-like clone) */
    int native_thread;           /* ...and it creates a thread, counted in g.threads before it ran */
    int critical;                /* depth of enter_critical */
    int ndeferred;               /* signals that arrived during an out-of-line step, sent again after it */
    siginfo_t deferred[8];
    int in_handler;              /* inside one of our signal handlers: signals are blocked already */
    int in_input;                /* inside a wrapped input function (check_input.c): its global writes checked after it */
    struct mc_arena *scan_arena; /* a stream scanf's arena (check_scan.h): glibc's mallocs meanwhile go there */
    stack_t alt;                 /* the agent's alternate signal stack for this thread */
    stack_t app_alt;             /* the one the program set with sigaltstack (ss_sp 0: none) */
    uintptr_t new_caller;        /* operator new's caller, the site of the malloc it makes (0: none) */
    int ctx_sent, nctx;          /* an MT_CONTEXT was sent; its return addresses (fault.c, send_context) */
    uint64_t ctx[MT_STACK_MAX_CONTEXT];
};
extern __thread struct thread_state ts __attribute__((tls_model("initial-exec")));
/* Top of this thread's stack for mt_ool_return's call into C (0: none, the program's stack serves). */
extern __thread uintptr_t mt_ool_stack __attribute__((tls_model("initial-exec")));
/* The program's value of the register a redirected copy borrows; the copy reloads it from %fs itself. */
extern __thread uint64_t mt_scratch_save __attribute__((tls_model("initial-exec")));
enum { STEP_NONE, STEP_TRAP, STEP_OOL }; /* how the current step runs: trap flag or out-of-line copy */

struct range {
    uintptr_t start, end;
    int prot;                    /* the rights the program gave the memory */
    int kind;                    /* enum mt_region */
};

/* Memory moved onto a shared-memory object (memfd): the program's view at [start, end) and the agent's  */
/* always-open alias view at start + delta. The program's view is protected as usual; the alias never is. */
struct alias {
    uintptr_t start, end;
    intptr_t delta;              /* never 0 */
    int prot;                    /* the program's rights when it was moved (what a private copy gets back) */
};
/* Internal flag of set_add_locked's kind: shared memory (MAP_SHARED) keeps its semantics, no alias. */
#define KIND_SHARED 0x100

struct opening {
    uintptr_t start, end;
    int count;
};

struct agent_state {
    int active;                  /* attached to a memtrace session; 0 in a forked child */
    int recording;               /* traced pages are protected and accesses recorded */
    int regions;                 /* MT_REGION_* to trace */
    int aliases;                 /* traced memory is moved onto memfds and steps redirected to the alias */
    int autostart;
    int stack_depth;             /* MEMTRACE_STACK_DEPTH: frames per allocation stack (1: the caller only) */
    long page;
    uintptr_t text_start, text_end;
    char self_path[512];
    int pid;
    int ppid;
    volatile int threads;

    struct mt_ring_header *ring;
    unsigned char *ring_data;
    uint64_t ring_mask;
    spinlock ring_lock;

    spinlock lock;               /* traced set and openings */
    struct range *set;
    int nset, capset;
    struct opening *open;        /* grows as needed: no fixed number of openings */
    int nopen, capopen;
    int all_open;                /* calls running with all traced memory open (see syscall_table) */
    struct alias *alias;         /* sorted, disjoint */
    int nalias, capalias;
    struct { uintptr_t s, e; } stacks[64]; /* pages the program gave as signal stacks: never traced */
    int nstacks;

    struct ksigaction app_action[65]; /* the program's actions, as it set them; the kernel holds ours */

    volatile uint64_t faults, steps, syscalls, windows, untraced_faults;
    volatile int redirected;     /* redirected steps under way (their copies may still write the alias) */
    int reported_modules;
    volatile int clone_parent;   /* tid of the thread whose clone(CLONE_VM) ran last: the new thread's parent */
};
extern struct agent_state g;

/* The real functions behind the wrappers. */
struct real_functions {
    MT_WRAPPED(MT_WRAPPED_REAL) /* the table's functions (include/mt_wrapped.h) */
    size_t (*malloc_usable_size)(void *);
    void (*cxa_finalize)(void *);
    int (*libc_start_main)(int (*)(int, char **, char **), int, char **, void (*)(void), void (*)(void),
                           void (*)(void), void *);
};
extern struct real_functions real;
extern int hooks_ready; /* 0 while dlsym may still allocate: the wrappers serve from the boot arena */

static inline int mytid(void)
{
    if (!ts.tid) ts.tid = (int)mt_sys0(SYS_gettid);
    return ts.tid;
}

static inline uintptr_t page_down(uintptr_t a) { return a & ~(uintptr_t)(g.page - 1); }
static inline uintptr_t page_up(uintptr_t a) { return (a + g.page - 1) & ~(uintptr_t)(g.page - 1); }

/* A critical section of agent code outside its own handlers: the program's signal handlers wait until */
/* it ends (on_program_signal defers them and leave_critical sends them again), at no system call.     */
/* The agent's own handlers cannot come in: only faults, traps and system calls of program code enter  */
/* them, and agent code makes none of those (THE RULE below, and raw syscalls from agent code).        */
static inline void enter_critical(void) { ts.critical++; __atomic_signal_fence(__ATOMIC_SEQ_CST); }
void leave_critical(void);
/* state.c: the signals deferred during a step or a critical section, sent again */
void redeliver_deferred(void);

#define REC(type_, T, var) \
    T var; \
    mt_memzero(&var, sizeof var); \
    var.h.type = (type_); \
    var.h.size = sizeof(T)

/* Build with -DMT_PROFILE (make CFLAGS="-O2 -g -DMT_PROFILE"): cycles and calls per part of the agent,  */
/* printed to stderr at the end (docs/fault-mode.md, "Where the time goes"). The parts nest: the time in */
/* the allocator and in emit() is part of the wrapper's, a fault's emit() part of the handler's.         */
enum { PROF_SEGV, PROF_TRAP, PROF_SYS, PROF_ALLOC_CALL, PROF_HEAP, PROF_EMIT, PROF_RING_FULL, PROF_N };
#ifdef MT_PROFILE
extern volatile uint64_t mt_prof_cycles[PROF_N], mt_prof_calls[PROF_N];
#define PROF_BEGIN(v) uint64_t v = __builtin_ia32_rdtsc()
#define PROF_END(k, v) do { \
        __atomic_add_fetch(&mt_prof_cycles[k], __builtin_ia32_rdtsc() - (v), __ATOMIC_RELAXED); \
        __atomic_add_fetch(&mt_prof_calls[k], 1, __ATOMIC_RELAXED); \
    } while (0)
void prof_report(void);
#else
#define PROF_BEGIN(v) do { } while (0)
#define PROF_END(k, v) do { } while (0)
#endif

/* Our handlers mark the thread as inside one of them: emit() then knows signals are blocked already. */
#define SIGNAL_HANDLER(name, body, prof) \
    void name(int sig, siginfo_t *si, void *ucv) \
    { \
        PROF_BEGIN(t0); \
        ts.in_handler++; \
        body(sig, si, ucv); \
        ts.in_handler--; \
        PROF_END(prof, t0); \
    }

/* ring.c */
void emit(void *rec);
void emit_with_tail(void *fixed, size_t fixed_size, const void *b1, size_t n1, const void *b2, size_t n2);
void emit_exit(int how, uint64_t value, uint64_t ip, uint64_t addr, const char *path);
void emit_stats_and_exit(int how, uint64_t value, uint64_t ip, uint64_t addr, const char *path);
void emit_thread(int start, uint64_t value);

/* traced.c: the *_locked functions want g.lock held */
int set_index(uintptr_t a);
struct range *set_find(uintptr_t a);
void set_remove_locked(uintptr_t s, uintptr_t e, int restore);
void set_add_locked(uintptr_t s, uintptr_t e, int prot, int kind);
int set_covers_locked(uintptr_t s, uintptr_t e);
int open_locked(uintptr_t s, uintptr_t e);
void close_locked(uintptr_t s, uintptr_t e);
void open_all_locked(void);
void close_all_locked(void);
void stop_for_memory_locked(void); /* no memory for the openings: recording stops, said once */
void protect_all_locked(int on);
void open_span(uintptr_t s, uintptr_t e, int open);
void control(int start, uintptr_t caller);
long user_transfer(void *ours, uintptr_t theirs, size_t n, int to_program);
long copy_in(void *dst, uintptr_t src, size_t n);
intptr_t alias_delta(uintptr_t s, uintptr_t e);
void alias_forget_locked(uintptr_t s, uintptr_t e);
void alias_make_private_locked(uintptr_t s, uintptr_t e);
void alias_discard_locked(uintptr_t s, uintptr_t e);
void alias_adopt_locked(uintptr_t s, uintptr_t e, intptr_t delta, int prot);
int reach_without_opening(uintptr_t s, uintptr_t e, intptr_t *delta);
size_t reach_stretch_locked(uintptr_t a, uintptr_t e, intptr_t *delta);

/* decode.c: how each faulting instruction runs */
enum { RUN_TRAP, RUN_OOL, RUN_JMP, RUN_CALL };
struct insn {
    uintptr_t ip;                /* key, 0 while free; stored last, so a reader sees a complete entry */
    unsigned char *slot;         /* RUN_OOL: the copy */
    unsigned char bytes[15];     /* as decoded: other bytes at ip mean other code, which takes the trap */
    uint8_t len, how;
    int8_t base, index;          /* RUN_JMP/RUN_CALL/redirect: gregs of the memory operand, -1 for none */
    uint8_t scale;
    int64_t disp;                /* ...and its displacement (the absolute address when RIP-relative) */
    unsigned char *rslot;        /* RUN_OOL: a copy whose memory operand is [scratch], or NULL */
    int8_t scratch;              /* ...the greg it uses, restored by the copy itself from ts.scratch_save */
    uint8_t access;              /* ...PROT_READ/PROT_WRITE the operand may need */
    uint16_t opsize;             /* ...bytes of the operand */
    uint8_t string;              /* STR_*: movs/stos/lods/cmps/scas, emulated on moved memory (fault.c) */
    uint8_t elem;                /* ...bytes per element */
    uint8_t rep;                 /* ...REP_*: its rep prefix */
    uint8_t stack;               /* STK_*: push/pop of a 64-bit ModRM operand (base..disp), emulated on moved memory */
};
enum { STR_NONE, STR_MOVS, STR_STOS, STR_LODS, STR_CMPS, STR_SCAS };
enum { REP_NONE, REP_E, REP_NE }; /* rep is REP_E: cmps/scas stop on ZF=0 with it, on ZF=1 with REP_NE */
enum { STK_NONE, STK_PUSH, STK_POP };
struct insn *cache_lookup(uintptr_t ip);
int decode_fault_operand(uintptr_t ip, const greg_t *gr, uintptr_t addr, uintptr_t *ea, size_t *size, int *write);
uintptr_t operand_address(const struct insn *e, const greg_t *gr);
struct operand_origin { uintptr_t ea; size_t size; int write; uintptr_t from[3]; int nfrom, nregs; };
int decode_operand_origin(uintptr_t ip, const greg_t *gr, uintptr_t addr, struct operand_origin *o);
void ool_init(void);
int is_decoder_object(uintptr_t bias);
int in_decoder_object(uintptr_t addr);
void mt_ool_return(void);

/* fault.c */
void mt_restorer(void);
void set_kernel_action(int sig, void *handler, unsigned long flags, uint64_t mask);
int give_alt_stack(void);
void forward(int sig, siginfo_t *si, ucontext_t *uc);
void on_segv(int sig, siginfo_t *si, void *ucv);
void on_trap(int sig, siginfo_t *si, void *ucv);
void on_program_signal(int sig, siginfo_t *si, void *ucv);
long install_program_action(int sig);

/* syscall.c */
void on_sys(int sig, siginfo_t *si, void *ucv);
void enable_dispatch(void);
void adopt_existing_handlers(void);

/* limits.c: the program's RLIMIT_AS, applied to what the program uses (the agent's reservations apart) */
struct rlimit;
int as_limit_before(long nr, const long *a, long *k, struct rlimit *kernel); /* 1: k names the widened limit */
void as_limit_after(long nr, const long *a, const long *k, long ret, int widened);
uint64_t as_limit_heap(void); /* the program's soft limit, or all ones */
int refused_clone(long nr, const long *a); /* a thread without glibc's thread block: said once, fails ENOSYS */
int refused_io_uring(long nr);             /* io_uring_setup: said once, fails ENOSYS */

/* heap.c: the allocator that serves the program while memtrace is attached */
void heap_init(void);
int heap_serves(void);
int heap_owns(const void *p);
void *heap_alias(const void *p);
void *heap_alloc(size_t n, size_t align, int *dirty);
size_t heap_usable(const void *p);
/* What a free of p is: a block of ours, one freed already (by the bin glibc would have kept it in, */
/* whose message differs), or no block's start at all. */
enum heap_bad { HEAP_OK, HEAP_FREED_TCACHE, HEAP_FREED, HEAP_FREED_MAPPED, HEAP_INVALID };
enum heap_bad heap_free(void *p);      /* frees a good block; anything else is left alone and said */
enum heap_bad heap_check(const void *p);
void heap_fork_prepare(void);
void heap_fork_done(int child);

/* wrappers.c */
int enter_untraced(void);
void leave_untraced(void);

/* modules.c */
extern uintptr_t ldso_base;
uintptr_t data_span_end(uintptr_t a);
void scan_new_modules(int initial);

/* check_run.c: memtrace run --check (chk.on); families and kinds as check/check.h's MC_* */
struct check_state { int on; };
extern struct check_state chk;
/* bit of MEMTRACE_REGIONS that memtrace run --check sets */
#define CHECK_REGION_BIT 0x100
void check_resolve(void);
void check_init(int regions);
void *check_alloc(size_t n, size_t al, int family, int fn, uintptr_t pc, int zero);
int check_free(void *p, int family, uintptr_t pc, const char *what);
void *check_realloc(void *old, size_t n, uintptr_t pc);
size_t check_usable(void *p);
void check_fault(ucontext_t *uc, uintptr_t addr, int write);
void check_segv(int sig, siginfo_t *si, ucontext_t *uc);
void check_block(const void *d, const void *s, size_t n, uintptr_t pc, const char *fn);
void check_syscall_out(long nr, const long *a, long ret, const ucontext_t *uc);
void check_counted(void);
struct mc_extent;
void check_report_extent(uintptr_t addr, size_t size, int write, uintptr_t pc, const char *by, const struct mc_extent *x);
int check_in_libc(uintptr_t ip);
/* check_globals.c: run --check's globals, by the executable's symbol extents */
void check_globals_init(void);
int check_globals_wanted(void);
int check_global_owns(uintptr_t a);
void check_global_fault(ucontext_t *uc, uintptr_t addr, uintptr_t ip, int libc);
int check_global_range(uintptr_t p, size_t n, int write, uintptr_t pc, const char *fn);
const char *check_function_of(uintptr_t pc);
/* check_locals.c: run --check's stack variables and lines, from the DWARF table memtrace hands over */
void check_locals_path(const char *path);
void check_locals_resolve(void);
void check_input_resolve(void); /* check_input.c: gets, fgets, scanf's family into stack and global arrays */
void check_locals_init(void);
int check_stack_range(uintptr_t p, size_t n, int write, uintptr_t pc, const char *by);
int check_stack_range_at(uintptr_t p, size_t n, int write, uintptr_t pc, const char *by, uintptr_t rbp, uintptr_t sp);
const char *check_line_of(uintptr_t pc);
extern __thread const greg_t *check_fault_gr __attribute__((tls_model("initial-exec")));
/* wrappers.c: the MT_ALLOC records of checked operators new and delete */
void check_note_alloc(void *p, size_t n, uintptr_t pc);
void check_note_free(void *p, uintptr_t pc);

#endif
