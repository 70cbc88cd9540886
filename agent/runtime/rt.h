/*
 * Internal interface of libmemtrace-rt.so, the runtime linked into programs built by `memtrace cc`
 * (docs/compiled-in.md, "The runtime"). Nothing here is exported: the library is built with
 * -fvisibility=hidden and only __memtrace_cursor, the public API and the wrappers carry RT_EXPORT.
 *
 * The pieces and who owns what:
 *   rt_buffer.c   per-thread buffers (each followed by a guard page), the thread registry, the SIGSEGV
 *                 handler that serves full buffers and first use, and rt_emit (events as tag slots)
 *   rt_probe.c    probes read from their code bytes: the first store, and a probe stopped between its
 *                 first store and its cursor's move (rewound so that a signal handler records first)
 *   rt_file.c     the .mtr file: header, chunks and their CRCs, end record, fork (rt_writer.h: the writer's parts)
 *   rt_queue.c    the pool of buffers, the queue of full ones, the writer thread and its helper
 *   rt_plan.c     chunk boundaries, planned by each thread as it queues a buffer
 *   rt_codec.c    codecs 0-6 and the encoders that turn a planned buffer into chunk payloads
 *   rt_fused.c    codecs 9 (the default) and 7, one pass per chunk
 *   rt_crc.c      CRC32C of the file's headers and payloads (include/mt_file.h lays the file out)
 *   rt_signal.c   the program's sigaction/signal/sigprocmask, fatal signals, forwarding of faults
 *   rt_init.c     start-up (hello, modules, mappings), start/stop, exit, exec, fork, threads
 *   rt_wrappers.c allocator, mapping, block-operation and I/O wrappers
 *   rt_debug.c    MT_DEBUG builds: the buffers' and chunks' invariants asserted
 *   ../common/    what the runtime shares with the fault-mode agent (common/mt_common.h)
 *   ../rewrite/rw_apply.c  the rewrite plan of `memtrace run --mode rewrite`, applied at start
 *   ../rewrite/rw_dlopen.c libraries opened by dlopen rewritten in that mode, forgotten at dlclose
 *   ../rewrite/rw_trap.c   the int3 fallback: SIGTRAP at an instruction no jump could patch, sent to its trampoline
 *
 * The runtime makes every system call itself (mt_sys*, mt_native.h): libc's entry points for write, mmap, sigaction
 * and friends are the wrappers of this very library.
 */
#ifndef MEMTRACE_RT_H
#define MEMTRACE_RT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <ucontext.h>

#include "memtrace_stream.h"
#include "mt_native.h"
#include "mt_common.h"

#define RT_EXPORT __attribute__((visibility("default")))
#define RT_CALLER ((uint64_t)(uintptr_t)__builtin_return_address(0))

/* ---- raw system calls ---------------------------------------------------------------------------- */
/* mt_sys0 … mt_sys6, shared with the agent: mt_native.h. */

/* ---- small helpers (no libc: its string functions are wrapped here); the agent's too: mt_common.h -- */
static inline void rt_memcpy(void *d, const void *s, size_t n) { mt_memcpy(d, s, n); }
static inline void rt_memzero(void *d, size_t n) { mt_memzero(d, n); }
static inline size_t rt_strlen(const char *s) { return mt_strlen(s); }
static inline int rt_strncmp(const char *a, const char *b, size_t n) { return mt_strncmp(a, b, n); }
static inline void *rt_map(size_t n) { return mt_map_pages(n); } /* anonymous private pages, NULL on failure */
/* rt_map for memory the runtime keeps to the end (the writer's buffers, codec tables, its thread's stack): */
/* listed, so that the MT_MAPPING records leave it out (rt_init.c). Never unmapped.                         */
void *rt_map_own(size_t n);
void rt_own_fork_child(void);           /* the list's lock, fresh in a fork child */
int rt_tid(void);
uint64_t rt_block_signals(void);        /* blocks every signal but the synchronous faults; returns the old mask */
void rt_restore_signals(uint64_t old);

/* A spinlock that knows its owner: a fatal signal inside the lock's holder must not deadlock. */
typedef struct { volatile int owner; } rt_lock;
void rt_lock_take(rt_lock *l);
void rt_lock_drop(rt_lock *l);

/* ---- buffers ------------------------------------------------------------------------------------- */
#define RT_MAX_CUTS 32              /* chunk boundaries one buffer plans, over its slots and its previous buffer's tail: by content at most 9 (a quarter buffer apart), by length at most 3 per buffer's size */
struct rt_buf {
    char *base;                 /* first slot */
    char *end;                  /* the guard page */
    char *from;                 /* slots before this were written already (by a fatal/exec flush) */
    char *used;                 /* end of the data when the buffer is queued */
    uint32_t tid;
    int events_only;            /* filled while recording was off: keep only the event slots */
    int last;                   /* the thread's last buffer: no later one finishes its last chunk */
    struct rt_buf *next;
    /* The chunks its slots make (rt_plan.c): boundaries cuts[], in order, the first ones possibly in */
    /* prev's tail [prev->tail, prev->used), which begins b's first chunk unless prev_alone; slots from   */
    /* tail on begin a chunk the thread's next buffer finishes.                                           */
    struct rt_buf *prev;
    int prev_alone;             /* prev's tail is a chunk of its own: recording changed between the two */
    char *tail;
    int ncuts;
    char *cuts[RT_MAX_CUTS];
    volatile int holds;         /* encodings still reading the slots: the buffer's own, and the next one's */
};

#define RT_MAX_THREADS 1024
struct rt_thread_slot {
    volatile int tid;           /* 0: free */
    char **cursor;              /* the thread's __memtrace_cursor */
    struct rt_buf *volatile buf;
};

struct rt_thread {
    struct rt_buf *buf;         /* current buffer, NULL before first use */
    int tid;
    int slot;                   /* index in the registry */
    int internal;               /* the runtime's own code is running: wrappers pass through (RT_PRIVATE_HEAP: */
                                /* and allocations come from the runtime's arena, not the program's heap)   */
    int handed;                 /* began in a buffer handed over (rt_thread_start.c): ends into the sink    */
    int raw_clone;              /* made by the program's clone (rt_thread_start.c): no pthread, no key destructor */
    int start_pending;          /* began before the runtime ran (a constructor's thread): MT_THREAD start   */
    uint64_t start_parent;      /* goes with its first event (rt_emit)                                      */
    int vectors_saved;          /* in the SIGSEGV handler's buffer hand-over: sigreturn restores every vector */
                                /* register, so the runtime may use AVX-512 there (rt_plan.c)                */
    volatile int emitting;      /* rt_emit_seq between its first write and its claim: a program handler's  */
    volatile int deferred;      /* records would be overwritten, so its signal waits (rt_signal_defer) with */
    uint64_t deferred_mask;     /* the interrupted code's mask, restored after the claim                   */
};

/* FINISHING: the final flush is writing every buffer; a thread whose buffer fills waits for it to end. */
#define RT_PRIVATE_HEAP 2

enum rt_state { RT_INIT = 0, RT_RUNNING = 1, RT_FINISHING = 2, RT_FINISHED = 3 };

struct rt_global {
    long page;
    size_t buf_size;            /* bytes of slots per buffer */
    int to_file;                /* MEMTRACE_OUT set: buffers are written, else discarded */
    volatile int recording;     /* between start and stop */
    volatile int state;         /* enum rt_state */
    volatile int finisher;      /* the thread writing the final flush */
    volatile int swapping;      /* threads handing over a buffer (rt_buffer.c, enter_swap) */
    int pid;
    int stack_depth;            /* MEMTRACE_STACK_DEPTH: frames per allocation stack (1: the caller only) */
    int access_stacks;          /* MEMTRACE_ACCESS_STACKS=1 (run --access-stacks): rewrite mode arms (rw_arm.c) */
    int ccarm;                  /* rt_ccarm.c arms `memtrace cc` probes: SIGTRAP is kept (rt_signal.c) */
    uint64_t seq;               /* the global event sequence */
    uint64_t text_start, text_end; /* the runtime's own code */
    rt_lock registry_lock;
    struct rt_thread_slot threads[RT_MAX_THREADS];
    volatile int live_threads;
};

extern struct rt_global rt;
extern __thread struct rt_thread rt_self __attribute__((tls_model("initial-exec")));
extern __thread char *__memtrace_cursor __attribute__((tls_model("initial-exec")));

/* rt_buffer.c */
void rt_buffer_init(void);
void rt_thread_begin(uint64_t parent, int announce); /* buffer + registry (+ MT_THREAD start) for the calling thread */
void rt_thread_begin_in(struct rt_buf *given, uint64_t parent); /* the same in a buffer handed over (rt_thread_start.c) */
struct rt_buf *rt_handover_begin(void);     /* a buffer the next thread pthread_create makes starts in; NULL: none */
void rt_handover_end(struct rt_buf *b, int created); /* after pthread_create: the image cleared, b back if unused */
void rt_thread_end(uint64_t value);        /* MT_THREAD exit, hand the buffer to the writer */
void rt_flush_current(void);               /* the calling thread's buffer to the writer (or discarded) */
int rt_probe_fault(siginfo_t *si, ucontext_t *uc); /* 1 when the fault was a probe's and is served */
void rt_emit(const void *rec, size_t len);
void rt_emit_seq(const void *rec, size_t len, uint64_t seq);
uint64_t rt_next_seq(void);
void rt_after_fork_child(void);
int rt_adopt_loop_cursor(const ucontext_t *uc); /* a signal inside a loop that keeps its cursor in a register C */
                                                /* (rt_loop_register): C made the cursor; its index, or -1     */
int rt_past_cursor(const char *v);        /* v lies in the thread's buffer past the cursor */
int rt_signal_cursor(ucontext_t *uc);      /* a program handler interrupts probes: the register that is */
                                           /* their cursor, known from the code at the pc (a loop's,      */
                                           /* adopted; a probe's in its window, rewound if it stopped     */
                                           /* mid-store), or -1: no register is ever guessed              */
void rt_discard_access_slots(int count);   /* memtrace_start: drop what probes wrote while stopped (counted) */

/* rt_probe.c */
long rt_cursor_tpoff(void);                /* __memtrace_cursor's offset from the thread pointer */
int rt_probe_store(const unsigned char *pc, long *disp, int *loop); /* pc is a probe's first store `mov A,d(C)`: */
                                           /* C's context index (d in *disp, *loop for a loop's form), or -1 */
int rt_probe_window(greg_t *gr);           /* a probe stopped after its first store and before its cursor    */
                                           /* moved: rewound to that store at the cursor; C's index (also of */
                                           /* a probe whose first store is ahead), or -1                     */

/* rt_file.c */
void rt_report_module(uint64_t bias, const unsigned char *bid, uint32_t bid_len, const char *name, size_t n);
/* agent/rewrite/rw_apply.c: the rewrite plan applied at start (memtrace run --mode rewrite), its module reported */
void rw_apply(void);
void rw_report(void);
struct dl_phdr_info;
uint64_t rw_place(uint64_t want, uint64_t size, uint64_t lo, uint64_t hi); /* fresh pages within rel32 of [lo,hi) */
/* the name of the memfd whose pages hold the punned jumps' stubs; /proc/self/maps shows "/memfd:" before it */
#define RW_STUBS_NAME "memtrace-stubs"
const char *rw_apply_loaded(const char *plan, const struct dl_phdr_info *o); /* NULL, or why not */
void rw_forget(uint64_t bias);      /* the module at bias was unloaded: its trampolines go */
void rw_report_last(void);          /* MT_MODULE of the trampoline file applied last */
/* agent/rewrite/rw_trap.c: the int3 fallback; a table of places per module, sorted by address */
struct rw_trap_entry {
    uint64_t at;        /* the int3, at run time */
    uint64_t to;        /* its trampoline, at run time */
    uint32_t accesses;  /* what the trampoline records (the fallback's count) */
    uint32_t flags;     /* RW_TRAP_SIGMASK: an rt_sigprocmask syscall the handler makes itself */
};
#define RW_TRAP_SIGMASK 1
int rw_trap_add(uint64_t module_bias, const struct rw_trap_entry *e, uint32_t n); /* 0 when no room */
void rw_trap_forget(uint64_t module_bias);
int rw_trap_active(void);           /* a table was ever added */
int rw_trap(const siginfo_t *si, ucontext_t *uc); /* 1: one of ours, the context sent to its trampoline */
void rw_trap_forked(void);          /* in a fork child: its counts start at 0 */
void rw_trap_report(void);          /* MT_FALLBACK, when a table was ever added */
extern uint64_t rw_puns[3];        /* rw_apply.c: puns written, kept their int3 (bytes changed, no stub page) */
/* agent/rewrite/rw_arm.c: access stacks, the first RW_ARM_RUNS entries of each trampoline trapped */
/* (and, from rt_ccarm.c, the probes of a `memtrace cc` build): at is an int3 over the first byte of a REX.W */
/* lea, which the handler emulates */
struct rw_arm_entry {
    uint64_t at;        /* the int3: a trampoline's first byte (its probe's `lea -128(%rsp),%rsp`), or a cc */
                        /* probe's first site label (its `lea EA,reg`) */
    uint64_t insn;      /* the module's instruction the stack is of (word 0 of the MT_CONTEXT) */
    uint32_t runs;      /* entries that trapped so far */
    uint8_t byte;       /* the byte the int3 covers (the lea's REX prefix), written back after the last run */
    uint8_t flags;      /* RW_ARM_UNWIND_AT: unwind at `at` (a cc probe, inside the function's CFI) not insn; */
                        /* RW_ARM_LOOP: a cc probe in a loop that keeps its cursor in a register, `cursor` */
    uint8_t cursor;     /* RW_ARM_LOOP: that register's signal-context index (REG_R11 …) */
    uint8_t pad;
};
#define RW_ARM_RUNS 4
#define RW_ARM_UNWIND_AT 1
#define RW_ARM_LOOP 2
int rw_arm_add(uint64_t module_bias, const struct rw_arm_entry *e, uint32_t n); /* sorted by at; 0: no room */
void rw_arm_forget(uint64_t module_bias);
void rw_arm_sort(struct rw_arm_entry *e, uint32_t n); /* by at: a heapsort, no libc, no memory of its own */
int rw_arm_lea(const unsigned char *b, unsigned char first); /* the length of a REX.W lea at b, else 0 */
void rw_arm_write(uint64_t at, unsigned char byte); /* one byte of code: /proc/self/mem, else mprotect */
/* agent/runtime/rt_ccarm.c: the probes of the `memtrace cc` modules loaded at start, armed for access stacks */
int rt_ccarm_prepare(void);         /* their tables made (before rt_signal_init): 1 when any probe will be armed */
void rt_ccarm_write(void);          /* their int3s written (once the SIGTRAP handler is in place) */
void rt_loops_init(void);           /* the executable's code noted, before any signal */
int rt_loop_register(uint64_t pc);  /* pc inside a loop that keeps its cursor in a register: its context index, */
                                    /* else -1 (the executable's loops read at the first call, signals blocked) */
int rw_arm(ucontext_t *uc, uint64_t pc);   /* 1: pc is an armed trampoline: its stack sent, the thread past its lea */
/* agent/rewrite/rw_dlopen.c: libraries opened by dlopen, rewritten before their constructors */
void rw_dlopen_init(const char *socket);
void rw_dlopen_returned(void);      /* after dlopen/dlclose: the scan, when ld.so could not be hooked */
void rt_modules_resync(void);       /* rt_init.c: objects went (dlclose): the next new ones are reported */
int rt_in_vfork_child(void);        /* a vfork child, sharing its parent's memory (rt_init.c) */
/* rt_init.c: the program's clone without CLONE_VM, made as a fork is (its child's part run before fn) */
int rt_clone_process(int (*real)(int (*)(void *), void *, int, void *, ...), int (*fn)(void *), void *stack, int flags,
                     void *arg, pid_t *ptid, void *tls, pid_t *ctid);
int rw_planned(void);               /* libraries are (or will be, at start) rewritten: no writer thread */
char *rw_sink_enter(void);          /* the thread's cursor to the sink while libraries are rewritten; the old one */
void rw_sink_leave(char *saved);    /* the thread's cursor back */
void *rt_next(const char *name);    /* dlsym(RTLD_NEXT, name), its accesses in rewritten libc into the sink */
int rt_file_open(const char *path, int pid, int codec);
/* Set when rt_file_open refused an existing file that holds something other than a trace. */
extern int rt_file_refused_foreign;
extern int rt_file_not_regular;

/* CRC32C of the .mtr file's checksums (rt_crc.c): rt_crc_init once before the first, then chained from 0. */
void rt_crc_init(void);
uint32_t rt_crc32c(uint32_t crc, const void *data, size_t n);
/* rt_queue.c */
void rt_file_queue(struct rt_buf *b);      /* hand a full buffer to the writer */
struct rt_buf *rt_buf_get(void);           /* a free buffer (waits while the writer is behind) */
void rt_buf_put(struct rt_buf *b);
/* rt_file.c */
void rt_finish(int how, uint64_t value, uint64_t ip, uint64_t addr, const char *path);
void rt_unfinish(void);
void rt_count_dropped(uint64_t n);         /* access slots that recording-off threw away */                    /* a failed exec: the file goes on */
void rt_file_fork_prepare(void);
void rt_file_fork_parent(void);
void rt_file_fork_child(const char *path, int pid);
/* rt_fd.c: the trace's descriptor, out of the program's way */
int rt_fd_adopt(int fd, const char *path); /* an opened trace file (absolute path): moved high, its identity kept */
int rt_fd_get(void);                       /* the trace's descriptor now, reopened if the program took it; -1: none */
void rt_fd_hold(void);                     /* around a write: a dup2 onto the number waits */
void rt_fd_release(void);
void rt_fd_drop(void);                     /* a fork's child lets the parent's go */

MT_DEBUG_ONLY(extern __thread int rt_debug_emit_fault;) /* memtrace_debug_break("emit"): the next event faults */
/* rt_debug.c: MT_DEBUG's checks of what this header and mt_file.h promise (empty in the product's build) */
struct mtr_chunk_header;
void rt_check_buf(const struct rt_buf *b);  /* a buffer queued for the writer, planned */
void rt_check_chunk(const struct mtr_chunk_header *h, const void *payload, int codec); /* before it is written */

/* rt_signal.c */
void rt_signal_init(void);
void rt_signal_adopt_raw(void);    /* before main: handlers raw system calls set since init */

/* rt_wrappers.c */
void rt_wrappers_init(void);
extern int rt_hooks_ready;

/* rt_init.c */
void rt_report_process(uint64_t parent);   /* MT_HELLO, MT_THREAD start, MT_MODULE and MT_MAPPING records */
void rt_scan_new_modules(void);

#define RT_REC(type_, T, name) \
    T name; \
    rt_memzero(&name, sizeof name); \
    name.h.type = (type_); \
    name.h.size = sizeof(T); \
    name.h.tid = (uint32_t)rt_tid()

#endif
