/*
 * rt_queue.c: the hand-off between the program's threads and the .mtr writer (docs/compiled-in.md, "The .mtr
 * file"; rt_writer.h lists the writer's parts).
 *
 * A full buffer is queued here by the thread that filled it, which plans its chunks (rt_plan.c), takes a free
 * buffer and goes on; a writer thread (on the second core, when there is one) takes buffers off the queue in
 * order, has them encoded (rt_codec.c) and appends the chunks to the file (rt_file.c). When the writer is more
 * than about two buffers per thread behind, a producer that needs a free buffer encodes the next queued one
 * itself (a second encoder, one such helper at a time) instead of sleeping, so both cores encode; every buffer
 * taken gets a ticket in queue order and chunks reach the file in ticket order. Nothing is ever dropped for
 * speed. What it counts reads in the trace's MT_WRITER record (the program's waits for a free buffer) and in
 * the summary ("program waited for the writer"). Without a writer thread (rewrite mode) the thread that filled
 * a buffer writes it at once; that time is counted apart ("program wrote its trace itself").
 *
 * What it gets wrong: a program thread that helps encodes a whole buffer before it goes on, so its wait is a
 * buffer's encoding even when a slot frees sooner; the pool grows to MAX_BUFS buffers when no writer runs and
 * nothing else bounds it; a buffer another thread fills in the middle of the final flush is dropped.
 */
#include <linux/futex.h>
#include <pthread.h>
#include <sys/mman.h>
#include <time.h>

#include "rt_writer.h"

static int help_writer(void);

static void futex_wait(volatile int *word, int value, long ns)
{
    struct timespec t = {0, ns};
    mt_sys6(SYS_futex, (long)word, FUTEX_WAIT_PRIVATE, value, (long)&t, 0, 0);
}

static void futex_wake(volatile int *word) { mt_sys6(SYS_futex, (long)word, FUTEX_WAKE_PRIVATE, 1 << 30, 0, 0, 0); }

/* ---- buffers -------------------------------------------------------------------------------------- */

static struct rt_buf *new_buffer(void)
{
    if (!wr.descs) wr.descs = rt_map_own(MAX_BUFS * sizeof *wr.descs);
    if (!wr.descs || wr.ndescs == MAX_BUFS) return NULL;
    char *m = rt_map_own(rt.buf_size + (size_t)rt.page);
    if (!m) return NULL;
    mt_sys3(SYS_mprotect, m + rt.buf_size, rt.page, PROT_NONE);
    /* Its pages at once (MADV_POPULATE_WRITE, Linux 5.14; ignored before): a fault a page as the probes */
    /* first fill it cost gemm's traced run 9 % of its CPU in this machine's VM (2,000 faults of 0.1 s).  */
    mt_sys3(SYS_madvise, (long)m, (long)rt.buf_size, 23 /* MADV_POPULATE_WRITE */);
    struct rt_buf *b = &wr.descs[wr.ndescs++];
    b->base = m;
    b->end = m + rt.buf_size;
    wr.nbufs++;
    return b;
}

static uint64_t monotonic_ns(void)
{
    struct timespec t;
    mt_sys2(SYS_clock_gettime, CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The wait a buffer cost, once one was found after none was free (`since` 0: none was missing). */
static void waited(uint64_t since)
{
    if (!since) return;
    __atomic_add_fetch(&wr.wait_ns, monotonic_ns() - since, __ATOMIC_RELAXED);
    __atomic_add_fetch(&wr.waits, 1, __ATOMIC_RELAXED);
}

struct rt_buf *rt_buf_get(void)
{
    uint64_t since = 0; /* when the program began to wait for the writer */
    for (;;) {
        int gen = wr.pool_gen;
        rt_lock_take(&wr.queue_lock);
        struct rt_buf *b = wr.free_list;
        if (b) wr.free_list = b->next;
        else if (!rt.to_file || rt.state != RT_RUNNING || wr.nbufs < 2 * rt.live_threads + 4) b = new_buffer();
        rt_lock_drop(&wr.queue_lock);
        if (!b && (wr.ndescs == MAX_BUFS || !wr.writer_running)) {
            /* no writer to wait for (or no room for one more): the program must go on with a new buffer; */
            /* it was `continue`d here, which left it out of the pool and took another, up to MAX_BUFS    */
            if (!since) since = monotonic_ns();
            rt_lock_take(&wr.queue_lock);
            b = new_buffer();
            rt_lock_drop(&wr.queue_lock);
            if (!b) mt_sys2(SYS_exit_group, 127, 0); /* no memory at all for a buffer: nothing sane is left */
        }
        if (b) {
            b->next = NULL;
            b->from = b->base;
            b->used = b->base;
            b->events_only = 0;
            b->last = 0;
            b->prev = NULL;
            b->ncuts = 0;
            waited(since);
            return b;
        }
        if (!since) since = monotonic_ns();
        if (help_writer()) continue;
        futex_wait(&wr.pool_gen, gen, 10 * 1000 * 1000);
    }
}

void rt_buf_put(struct rt_buf *b)
{
    rt_lock_take(&wr.queue_lock);
    b->next = wr.free_list;
    wr.free_list = b;
    rt_lock_drop(&wr.queue_lock);
    __atomic_add_fetch(&wr.pool_gen, 1, __ATOMIC_RELEASE);
    futex_wake(&wr.pool_gen);
}

void rt_file_queue(struct rt_buf *b)
{
    __atomic_add_fetch(&wr.buffers, 1, __ATOMIC_RELAXED);
    {
        PROF_START;
        wr_plan(b);
        PROF_END(0);
    }
    MT_DEBUG_ONLY(rt_check_buf(b));
    if (!wr.writer_running) { /* the program's thread pays for the encoding and the write: counted as such */
        uint64_t since = monotonic_ns();
        int saved = rt_self.internal;
        rt_self.internal = 1;
        rt_lock_take(&wr.file_lock);
        wr_write_queued(b);
        rt_lock_drop(&wr.file_lock);
        rt_self.internal = saved;
        __atomic_add_fetch(&wr.own_ns, monotonic_ns() - since, __ATOMIC_RELAXED);
        __atomic_add_fetch(&wr.own, 1, __ATOMIC_RELAXED);
        return;
    }
    b->next = NULL;
    rt_lock_take(&wr.queue_lock);
    if (wr.tail) wr.tail->next = b;
    else wr.head = b;
    wr.tail = b;
    rt_lock_drop(&wr.queue_lock);
    __atomic_add_fetch(&wr.queued, 1, __ATOMIC_RELEASE);
    futex_wake(&wr.queued);
}

/* The oldest queued buffer, taken off the queue; NULL when it is empty. wr.queue_lock held. */
static struct rt_buf *pop_locked(void)
{
    struct rt_buf *b = wr.head;
    if (b) {
        wr.head = b->next;
        if (!wr.head) wr.tail = NULL;
        __atomic_sub_fetch(&wr.queued, 1, __ATOMIC_RELEASE);
    }
    return b;
}

struct rt_buf *wr_dequeue(void)
{
    rt_lock_take(&wr.queue_lock);
    struct rt_buf *b = pop_locked();
    rt_lock_drop(&wr.queue_lock);
    return b;
}


void wr_release(struct rt_buf *b)
{
    if (__atomic_sub_fetch(&b->holds, 1, __ATOMIC_ACQ_REL) == 0) rt_buf_put(b);
}

/* A buffer off the queue (planned when it was queued) while no ticket is handed out: written and let go. */
void wr_write_queued(struct rt_buf *b)
{
    wr_encode_buffer(&wr_enc[0], b, 1);
    wr_append(&wr_enc[0], b->tid);
    wr_release(b);
}

/* The oldest queued buffer and its ticket, while the process runs (the final flush drains the rest). */
static struct rt_buf *take_ticket(int *ticket)
{
    rt_lock_take(&wr.queue_lock);
    struct rt_buf *b = rt.state == RT_RUNNING ? pop_locked() : NULL;
    if (b) *ticket = wr.next_ticket++;
    rt_lock_drop(&wr.queue_lock);
    return b;
}

/* Encodes a ticketed buffer's chunks with x, waits for the chunks before it, appends, and lets the buffer go. */
static void encode_in_turn(struct encoder *x, struct rt_buf *b, int ticket)
{
    wr_encode_buffer(x, b, 1);
    for (int seen; (seen = __atomic_load_n(&wr.appended, __ATOMIC_ACQUIRE)) != ticket;) futex_wait(&wr.appended, seen, 1000 * 1000);
    wr_append(x, b->tid);
    __atomic_store_n(&wr.appended, ticket + 1, __ATOMIC_RELEASE);
    futex_wake(&wr.appended);
    wr_release(b);
}

/* A program thread that would wait for a free buffer encodes a queued one instead (encoder 1, if free):  */
/* then both cores encode while the writer is behind. Returns 1 when it freed a buffer.                    */
static int help_writer(void)
{
    int none = 0;
    if (!__atomic_compare_exchange_n(&wr_enc[1].lock.owner, &none, rt_tid(), 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) return 0;
    int ticket;
    struct rt_buf *b = take_ticket(&ticket);
    if (b) {
        int saved = rt_self.internal;
        rt_self.internal = 1; /* zstd's memcpy is the program's wrapped one: no events from it */
        encode_in_turn(&wr_enc[1], b, ticket);
        rt_self.internal = saved;
    }
    rt_lock_drop(&wr_enc[1].lock);
    return b != NULL;
}

static void *writer_main(void *arg)
{
    (void)arg;
    rt_self.internal = 1;
    rt_block_signals(); /* the program's signals are for its own threads */
    for (;;) {
        if (!wr.queued) { futex_wait(&wr.queued, 0, 100 * 1000 * 1000); continue; }
        int ticket;
        struct rt_buf *b = take_ticket(&ticket);
        if (!b) { /* the final flush drains the queue */
            struct timespec ms = {0, 1000 * 1000};
            mt_sys2(SYS_nanosleep, &ms, 0);
            continue;
        }
        rt_lock_take(&wr_enc[0].lock);
        encode_in_turn(&wr_enc[0], b, ticket);
        rt_lock_drop(&wr_enc[0].lock);
    }
    return NULL;
}

/* Without a writer thread (pthread_create failed), buffers are written by the thread that filled them. */
void wr_start_writer(void)
{
    /* libc rewritten (or about to be): a new thread starts in libc's start_thread with every signal blocked, */
    /* where a probe's first record cannot fault into the runtime; the threads that fill buffers write them */
    if (rw_planned()) { wr.writer_running = 0; return; }
    int saved = rt_self.internal;
    rt_self.internal = RT_PRIVATE_HEAP;
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    /* its stack is the runtime's own (rt_map_own), not a mapping of the program's; its lowest page a guard */
    const size_t stack = 256 * 1024;
    char *s = rt_map_own(stack);
    if (s && !mt_failed(mt_sys3(SYS_mprotect, s, rt.page, PROT_NONE))) pthread_attr_setstack(&a, s, stack);
    else pthread_attr_setstacksize(&a, stack);
    wr.writer_running = pthread_create(&t, &a, writer_main, NULL) == 0;
    pthread_attr_destroy(&a);
    rt_self.internal = saved;
}
