/*
 * rt_buffer.c: per-thread buffers of libmemtrace-rt.so and the fault that serves them.
 *
 * Every probe the rewriter inserted stores one 16-byte slot {address, site} per site of its group at the
 * thread's cursor (__memtrace_cursor, initial-exec TLS; an executable built by memtrace cc defines it
 * itself and this library's references bind to that copy) and advances it; it never compares. A buffer is
 * a whole number of pages followed by a PROT_NONE guard page, and a probe stores its highest slot first, so
 * that store faults when the group does not fit. The SIGSEGV handler (rt_probe_fault) recognizes the
 * probe by its code bytes (rt_probe.c) (`mov %fs:(T),C`, or `mov %fs:disp32,C` at the cursor's offset, then, at the
 * faulting pc, `mov A,d(C)` with d 0 or a disp8; A, C and T are registers the rewriter chose; in a loop
 * that keeps the cursor in C no load comes before, and `lea disp32(%rip),A; mov A,d+8(C)` follows) and by C being the thread's
 * cursor and the fault address C + d: either the group does not fit before the guard page (full: the
 * buffer goes to the writer and a fresh one takes its place) or C is 0 (the thread's first probe: its
 * buffer is created and MT_THREAD start recorded). It then points C and the cursor at the new buffer and
 * returns, and the store runs again.
 *
 * Wrapper events go into the same buffer as tag slots (rt_emit): the slots are written past the cursor
 * first and claimed with one compare-and-swap of the cursor. The program's signal handlers never run from
 * the emitter's read of the cursor to its claim: their records would go where the emitter still writes
 * (rt_signal.c defers the signal to the claim). Each event carries the next value of one process-wide
 * counter, which orders events across threads.
 *
 * What it gets wrong: a program whose own code stores %rax
 * through a null register C right after loading C with `mov %fs:(T),C`, in a thread that never ran a probe,
 * would be taken for a probe. A loop that keeps its cursor in a register (docs/compiled-in.md, "A loop's
 * cursor") leaves the cursor in memory behind while it runs: another thread's exit flush misses what the
 * loop recorded since its entry. (A program handler is handed the register as the cursor, and a probe it
 * stops after its first store is rewound first: rt_signal_cursor, rt_probe.c.)
 */
#include <pthread.h>
#include <sys/mman.h>

#include "rt.h"

struct rt_global rt;
__thread struct rt_thread rt_self __attribute__((tls_model("initial-exec")));
/* In .tdata, not .tbss, though it starts null: rt_thread_start.c writes a new thread's first buffer into */
/* its initialization image around pthread_create.                                                      */
MT_DEBUG_ONLY(__thread int rt_debug_emit_fault __attribute__((tls_model("initial-exec")));)
RT_EXPORT __thread char *__memtrace_cursor __attribute__((tls_model("initial-exec"), section(".tdata")));

static pthread_key_t exit_key;

/* Where the probes of a thread write after its end (rt_thread_end) when it began in a handed-over buffer */
/* or libc is rewritten:                                                                                   */
/* libc's start_thread goes on after the key destructors, partly with every signal blocked, so its        */
/* probes must find a cursor that does not fault. Every such thread starts again at the sink's base; what */
/* lands there is discarded, and a fault at its guard page (signals open) starts it over.                 */
#define SINK_SIZE (64 * 1024)
static char *sink;

/* ---- helpers -------------------------------------------------------------------------------------- */

int rt_tid(void)
{
    if (!rt_self.tid) rt_self.tid = (int)mt_sys0(SYS_gettid);
    return rt_self.tid;
}

#define SIGBIT(s) (1ULL << ((s) - 1))
uint64_t rt_block_signals(void)
{
    uint64_t all = ~(SIGBIT(SIGSEGV) | SIGBIT(SIGBUS) | SIGBIT(SIGFPE) | SIGBIT(SIGILL) | SIGBIT(SIGTRAP)), old = 0;
    mt_sys4(SYS_rt_sigprocmask, SIG_BLOCK, &all, &old, 8);
    return old;
}

void rt_restore_signals(uint64_t old) { mt_sys4(SYS_rt_sigprocmask, SIG_SETMASK, &old, 0, 8); }

void rt_lock_take(rt_lock *l)
{
    int me = rt_tid();
    if (__atomic_load_n(&l->owner, __ATOMIC_RELAXED) == me) return; /* re-entered by a fatal signal: go on */
    int expected = 0;
    while (!__atomic_compare_exchange_n(&l->owner, &expected, me, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
        expected = 0;
        mt_sys0(SYS_sched_yield);
    }
}

void rt_lock_drop(rt_lock *l) { __atomic_store_n(&l->owner, 0, __ATOMIC_RELEASE); }

uint64_t rt_next_seq(void) { return __atomic_fetch_add(&rt.seq, 1, __ATOMIC_RELAXED); }

/* ---- buffers changing hands ---------------------------------------------------------------------- */

/* A buffer changing hands (queued, replaced) is invisible to the final flush for a moment: the final   */
/* flush waits until no thread is in such a section (rt.swapping), and a thread that would enter one    */
/* while the final flush runs waits until it has written this thread's buffer as it stands.            */
static void enter_swap(void)
{
    for (;;) {
        __atomic_add_fetch(&rt.swapping, 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&rt.state, __ATOMIC_SEQ_CST) != RT_FINISHING || rt.finisher == rt_tid()) return;
        __atomic_sub_fetch(&rt.swapping, 1, __ATOMIC_SEQ_CST);
        while (rt.state == RT_FINISHING) mt_sys0(SYS_sched_yield);
    }
}

static void leave_swap(void) { __atomic_sub_fetch(&rt.swapping, 1, __ATOMIC_SEQ_CST); }

/* ---- threads -------------------------------------------------------------------------------------- */

static void on_thread_exit(void *value)
{
    (void)value;
    rt_thread_end(0);
}

void rt_buffer_init(void)
{
    pthread_key_create(&exit_key, on_thread_exit);
    sink = rt_map_own(SINK_SIZE + (size_t)rt.page);
    if (sink) mt_sys3(SYS_mprotect, sink + SINK_SIZE, rt.page, PROT_NONE);
}

static int registry_add(int tid, struct rt_buf *b)
{
    rt_lock_take(&rt.registry_lock);
    int at = -1;
    for (int i = 0; i < RT_MAX_THREADS; i++)
        if (!rt.threads[i].tid) { at = i; break; }
    if (at >= 0) {
        rt.threads[at].cursor = &__memtrace_cursor;
        rt.threads[at].buf = b;
        rt.threads[at].tid = tid;
        rt.live_threads++;
    }
    rt_lock_drop(&rt.registry_lock);
    return at;
}

/* Makes b the calling thread's buffer with the cursor at `cursor`, in its registry slot, its end armed;   */
/* signals are blocked (old: the mask to restore), and MT_THREAD start follows when announced.         */
static void adopt(struct rt_buf *b, char *cursor, uint64_t old, uint64_t parent, int announce)
{
    b->tid = (uint32_t)rt_tid();
    rt_self.buf = b;
    rt_self.slot = registry_add(rt_tid(), b);
    __memtrace_cursor = cursor;
    /* Only pthread threads run key destructors; the main thread ends through exit, a raw clone's child */
    /* when its function returns (rt_thread_start.c).                                                    */
    if (rt_tid() != rt.pid && !rt_self.raw_clone) {
        char *saved = rw_sink_enter(); /* rewritten libc's work for the runtime: not the thread's accesses */
        pthread_setspecific(exit_key, (void *)1);
        rw_sink_leave(saved);
    }
    rt_restore_signals(old);
    if (!announce) return;
    if (rt.state == RT_INIT) {
        if (rt_tid() == rt.pid) return; /* the main thread's start is rt_report_process's */
        /* A thread that existed before the runtime's constructor (a linked library's constructor started it) */
        /* and probed while the plans were applied: no event can be recorded yet, so its start goes with its  */
        /* first event (rt_emit), its exit at the latest.                                                    */
        rt_self.start_pending = 1;
        rt_self.start_parent = parent;
        return;
    }
    RT_REC(MT_THREAD, struct mt_thread, t);
    t.h.flags = MT_THREAD_START;
    t.value = parent;
    rt_emit(&t, sizeof t);
}

void rt_thread_begin(uint64_t parent, int announce)
{
    if (rt_self.buf) return;
    uint64_t old = rt_block_signals();
    struct rt_buf *b = rt_buf_get();
    adopt(b, b->base, old, parent, announce);
}

void rt_thread_begin_in(struct rt_buf *given, uint64_t parent)
{
    char *c = __memtrace_cursor;
    if (rt_self.buf || !given || c < given->base || c > given->end) {
        /* not handed over (the executable's own cursor, or already begun): the buffer goes back */
        if (given) rt_buf_put(given);
        if (rt.state == RT_RUNNING) rt_thread_begin(parent, 1);
        return;
    }
    /* start_thread's probes have written into `given` since the thread's first instruction: keep them */
    uint64_t old = rt_block_signals();
    rt_self.handed = 1;
    adopt(given, __memtrace_cursor, old, parent, 1);
}

void rt_thread_end(uint64_t value)
{
    if (!rt_self.buf) return;
    RT_REC(MT_THREAD, struct mt_thread, t);
    t.h.flags = MT_THREAD_EXIT;
    t.value = value;
    rt_emit(&t, sizeof t);
    uint64_t old = rt_block_signals();
    enter_swap();
    struct rt_buf *b = rt_self.buf;
    b->used = __memtrace_cursor;
    b->last = 1; /* its tail joins no later buffer (rt_plan.c) */
    b->events_only = !rt.recording;
    rt_lock_take(&rt.registry_lock);
    if (rt_self.slot >= 0) {
        rt.threads[rt_self.slot].tid = 0;
        rt.live_threads--;
    }
    rt_lock_drop(&rt.registry_lock);
    rt_self.buf = NULL;
    /* a probe still running (another key's destructor) starts a new buffer; after a handed-over start, */
    /* or in any thread while libc is rewritten, libc's exit path runs rewritten, partly with signals    */
    /* blocked: its probes go to the sink. (A thread libc started itself, begun at its first probe, was  */
    /* begun again and ended at each round of its key destructors, its exit key set anew each time.)     */
    __memtrace_cursor = (rt_self.handed || rw_planned()) && sink ? sink : NULL;
    if (rt.to_file && rt.state == RT_RUNNING) rt_file_queue(b);
    else rt_buf_put(b);
    leave_swap();
    rt_restore_signals(old);
}

/* ---- full buffers --------------------------------------------------------------------------------- */

/* Signals are blocked (or we are in the SIGSEGV handler, which blocks them all). */
static void swap_buffer(void)
{
    struct rt_buf *b = rt_self.buf;
    enter_swap();
    if (!rt.to_file || rt.state != RT_RUNNING) {
        b->from = b->base;
        __memtrace_cursor = b->base;
        leave_swap();
        return;
    }
    b->used = __memtrace_cursor;
    b->events_only = !rt.recording;
    struct rt_buf *n = rt_buf_get();
    n->tid = b->tid;
    rt_file_queue(b);
    rt_self.buf = n;
    if (rt_self.slot >= 0) rt.threads[rt_self.slot].buf = n;
    __memtrace_cursor = n->base;
    leave_swap();
}

void rt_flush_current(void)
{
    if (!rt_self.buf) return;
    uint64_t old = rt_block_signals();
    swap_buffer();
    rt_restore_signals(old);
}

/* v lies in the thread's buffer past the cursor: where a loop that keeps its cursor in a register has got */
/* to, while the cursor in memory is still where the loop began.                                          */
int rt_past_cursor(const char *v)
{
    const struct rt_buf *b = rt_self.buf;
    return b && __memtrace_cursor >= b->base && v > __memtrace_cursor && v <= b->end;
}

int rt_probe_fault(siginfo_t *si, ucontext_t *uc)
{
    greg_t *gr = uc->uc_mcontext.gregs;
    const unsigned char *pc = (const unsigned char *)gr[REG_RIP];
    long disp;
    int loop;
    int c = rt_probe_store(pc, &disp, &loop);
    if (c < 0) return 0;
    char *rdx = (char *)gr[c]; /* the cursor register (%rdx in most probes) */
    /* A loop's probes advance the cursor in C only: the memory copy is where the loop began (or last */
    /* faulted), so C must lie in the thread's buffer instead, and becomes the cursor.                 */
    if (loop && rt_past_cursor(rdx)) __memtrace_cursor = rdx;
    if (rdx != __memtrace_cursor || (char *)si->si_addr != rdx + disp) return 0;
    int saved = rt_self.internal;
    rt_self.internal = 1;
    if (!rdx) {
        rt_self.internal = saved;
        rt_thread_begin(0, 1);
    } else if (rt_self.buf && rdx <= rt_self.buf->end && rdx + disp >= rt_self.buf->end) {
        int vs = rt_self.vectors_saved;
        rt_self.vectors_saved = 1; /* a signal frame: sigreturn restores every vector register (rt_plan.c) */
        swap_buffer();
        rt_self.vectors_saved = vs;
        rt_self.internal = saved;
    } else if (!rt_self.buf && sink && rdx >= sink && rdx <= sink + SINK_SIZE && rdx + disp >= sink + SINK_SIZE) {
        __memtrace_cursor = sink; /* a thread past its end: the sink starts over */
        rt_self.internal = saved;
    } else {
        rt_self.internal = saved;
        return 0;
    }
    gr[c] = (greg_t)__memtrace_cursor;
    return 1;
}

/* Knowledge, not a guess: only the register of the loop pc is in is taken (a scratch register merely   */
/* pointing past the cursor was: a dead one a probe had left its cursor in, from a buffer since recycled, */
/* made the records between the cursor and it, stale slots, part of the trace).                          */
int rt_adopt_loop_cursor(const ucontext_t *uc)
{
    const greg_t *gr = uc->uc_mcontext.gregs;
    int c = rt_loop_register((uint64_t)gr[REG_RIP]);
    if (c < 0) return -1;
    char *v = (char *)gr[c];
    if (v == __memtrace_cursor) return c; /* also 0 in a thread without a buffer yet */
    if (!rt_past_cursor(v) || (v - rt_self.buf->base) % 16) return -1;
    __memtrace_cursor = v;
    return c;
}

int rt_signal_cursor(ucontext_t *uc)
{
    greg_t *gr = uc->uc_mcontext.gregs;
    uint64_t pc = (uint64_t)gr[REG_RIP];
    /* The runtime's own code holds buffer pointers of its own (rt_emit claims its slots by a            */
    /* compare-and-swap, which a handler's records make fail): none of them is a probe's cursor.         */
    if (pc >= rt.text_start && pc < rt.text_end) return -1;
    /* Inside a loop its register is the cursor; then a probe stopped in its window (a loop's or a group  */
    /* probe's, whose C is the cursor once its first store has run or is next) is rewound and names its C. */
    /* Anywhere else no register is the cursor: after a commit C equals it, or a dead C holds a stale one. */
    int loop = rt_adopt_loop_cursor(uc);
    int c = rt_probe_window(gr);
    return c >= 0 ? c : loop;
}

void rt_discard_access_slots(int count)
{
    if (!rt_self.buf) return;
    uint64_t old = rt_block_signals();
    char *in = rt_self.buf->from, *out = in, *end = __memtrace_cursor;
    uint64_t dropped = 0;
    while (in < end) {
        uint64_t w1 = ((uint64_t *)in)[1];
        size_t n = 16;
        dropped += !(w1 >> 63);
        if (w1 >> 63) n += ((((w1 >> 8) & 0xffff) + 15) / 16) * 16;
        if (w1 >> 63) {
            if (out != in) rt_memcpy(out, in, n);
            out += n;
        }
        in += n;
    }
    __memtrace_cursor = out;
    if (count) rt_count_dropped(dropped);
    rt_restore_signals(old);
}

/* ---- events --------------------------------------------------------------------------------------- */

/* From its read of the cursor to its claim, rt_emit_seq writes an event past the cursor: a program handler */
/* entered there would record at the same place, and the writes still to come would overwrite its records */
/* (a failed claim only wrote the event again: CcSignalStressTest). Its signal waits until the claim      */
/* (rt_signal.c, defer) and is delivered when the interrupted mask comes back here.                        */
static void emit_open(void)
{
    rt_self.emitting = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static void emit_close(void)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    rt_self.emitting = 0;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    if (rt_self.deferred) {
        rt_self.deferred = 0;
        mt_sys4(SYS_rt_sigprocmask, SIG_SETMASK, &rt_self.deferred_mask, 0, 8);
    }
}

void rt_emit_seq(const void *rec, size_t len, uint64_t seq)
{
    if (rt_self.internal || rt.state != RT_RUNNING) return;
    size_t bytes = 16 + ((len + 15) / 16) * 16;
    for (;;) {
        emit_open();
        char *c = __memtrace_cursor;
        if (!c) {
            emit_close();
            rt_thread_begin(0, 1);
            continue;
        }
        if (!rt_self.buf) { /* a thread past its end writes to the sink (rt_thread_end): nowhere to emit */
            emit_close();
            return;
        }
        if (c + bytes > rt_self.buf->end) {
            emit_close();
            rt_flush_current();
            if (rt.state != RT_RUNNING) return;
            continue;
        }
        uint64_t *slot = (uint64_t *)c;
        slot[0] = seq;
        slot[1] = (1ULL << 63) | ((uint64_t)len << 8) | 1;
        MT_DEBUG_ONLY(if (rt_debug_emit_fault) { /* memtrace_debug_break("emit"): the runtime faults here */
            rt_debug_emit_fault = 0;
            (void)*(volatile char *)8;
        })
        rt_memcpy(c + 16, rec, len);
        rt_memzero(c + 16 + len, bytes - 16 - len);
        int claimed = __atomic_compare_exchange_n(&__memtrace_cursor, &c, c + bytes, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
        emit_close();
        if (claimed) return;
    }
}

void rt_emit(const void *rec, size_t len)
{
    if (rt_self.internal || rt.state != RT_RUNNING) return;
    if (rt_self.start_pending) {
        rt_self.start_pending = 0;
        RT_REC(MT_THREAD, struct mt_thread, t);
        t.h.flags = MT_THREAD_START;
        t.value = rt_self.start_parent;
        rt_emit_seq(&t, sizeof t, rt_next_seq());
    }
    rt_emit_seq(rec, len, rt_next_seq());
}

/* The forking thread is the child's only thread; what its buffer held is the parent's. */
void rt_after_fork_child(void)
{
    rt_self.tid = 0;
    rt.pid = rt_tid();
    rt.registry_lock.owner = 0;
    for (int i = 0; i < RT_MAX_THREADS; i++) rt.threads[i].tid = 0;
    rt.live_threads = 0;
    if (rt_self.buf) {
        rt_self.buf->from = rt_self.buf->base;
        rt_self.buf->tid = (uint32_t)rt.pid;
        rt_self.slot = registry_add(rt.pid, rt_self.buf);
        __memtrace_cursor = rt_self.buf->base;
    }
}
