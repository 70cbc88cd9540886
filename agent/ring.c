/*
 * memtrace agent, the ring: every record the agent writes goes through emit(), which appends it to the
 * shared-memory ring memtrace maps (include/memtrace_stream.h: a header page with head and tail on their
 * own cache lines, then a power-of-two data area). Records are 8-byte aligned; one that would wrap is
 * preceded by an MT_PAD filler up to the end. The tail is published with a release store after the bytes,
 * so the consumer (event/RingReader) reads whole records; it never needs waking: the agent does not
 * signal it, it polls in batches.
 *
 * How it reads: a stream of {type, flags, size, tid} headers, each followed by its fixed fields and an
 * optional tail (a path, a build-id).
 *
 * What it gets wrong: one lock for all threads serialises producers; when the ring is full the agent
 * sleeps 50 µs and tries again, so a slow consumer slows the program; records are dropped (and counted
 * in `lost`) only once memtrace is gone. A record's tail is cut at 8 KiB.
 */
#include "agent.h"

/* ------------------------------------------------------------------------------------------------ */
/* The ring                                                                                         */

/* Appends one record; `rec` starts with a filled-in mt_rec_header whose size is a multiple of 8.     */
/* Waits while the ring is full; drops (and counts) only when memtrace is gone.                       */
void emit(void *rec)
{
    if (!g.active || !g.ring) return;
    struct mt_rec_header *h = rec;
    h->tid = (uint32_t)mytid();
    uint64_t size = h->size;
    enter_critical();
    spin_lock(&g.ring_lock);
    uint64_t cap = g.ring_mask + 1;
    for (;;) {
        uint64_t tail = g.ring->tail;
        uint64_t at = tail & g.ring_mask;
        uint64_t pad = (at + size > cap) ? cap - at : 0;
        uint64_t head = __atomic_load_n(&g.ring->head, __ATOMIC_ACQUIRE);
        if (tail + pad + size - head <= cap) {
            if (pad) {
                struct mt_rec_header *p = (void *)(g.ring_data + at);
                p->type = MT_PAD;
                p->flags = 0;
                p->size = (uint16_t)pad; /* < 8 KiB: no record is larger */
                p->tid = 0;
                tail += pad;
                at = 0;
            }
            mt_memcpy(g.ring_data + at, rec, size);
            __atomic_store_n(&g.ring->tail, tail + size, __ATOMIC_RELEASE);
            break;
        }
        if (mt_sys0(SYS_getppid) != g.ppid) { /* memtrace is gone: nobody will ever read this */
            __atomic_add_fetch(&g.ring->lost, 1, __ATOMIC_RELAXED);
            break;
        }
        struct timespec t = {0, 50000};
        mt_sys2(SYS_nanosleep, &t, 0);
    }
    spin_unlock(&g.ring_lock);
    leave_critical();
}

#define REC(type_, T, var) \
    T var; \
    mt_memzero(&var, sizeof var); \
    var.h.type = (type_); \
    var.h.size = sizeof(T)

/* A record with a trailing string (and optional bytes before it), padded to 8. */
void emit_with_tail(void *fixed, size_t fixed_size, const void *b1, size_t n1, const void *b2, size_t n2)
{
    unsigned char buf[8192];
    size_t total = (fixed_size + n1 + n2 + 7) & ~(size_t)7;
    if (total > sizeof buf) {
        n2 = sizeof buf - fixed_size - n1;
        total = sizeof buf;
    }
    mt_memzero(buf, total);
    mt_memcpy(buf, fixed, fixed_size);
    if (n1) mt_memcpy(buf + fixed_size, b1, n1);
    if (n2) mt_memcpy(buf + fixed_size + n1, b2, n2);
    ((struct mt_rec_header *)buf)->size = (uint16_t)total;
    emit(buf);
}

void emit_exit(int how, uint64_t value, uint64_t ip, uint64_t addr, const char *path)
{
    REC(MT_EXIT, struct mt_exit, e);
    e.h.flags = (uint8_t)how;
    e.value = value;
    e.ip = ip;
    e.addr = addr;
    size_t n = path ? mt_strlen(path) : 0;
    e.path_len = (uint32_t)n;
    emit_with_tail(&e, sizeof e, NULL, 0, path, n);
}

void emit_stats_and_exit(int how, uint64_t value, uint64_t ip, uint64_t addr, const char *path)
{
    if (!g.active) return;
    REC(MT_STATS, struct mt_stats, s);
    s.faults = g.faults;
    s.steps = g.steps;
    s.syscalls = g.syscalls;
    s.windows_at_risk = g.windows;
    s.untraced_faults = g.untraced_faults;
    emit(&s);
    emit_exit(how, value, ip, addr, path);
    __atomic_store_n(&g.ring->done, 1, __ATOMIC_RELEASE);
}

void emit_thread(int start, uint64_t value)
{
    REC(MT_THREAD, struct mt_thread, t);
    t.h.flags = start ? MT_THREAD_START : MT_THREAD_EXIT;
    t.value = value;
    emit(&t);
}
