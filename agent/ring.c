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
#include <time.h>
#include <sys/time.h>

/* ------------------------------------------------------------------------------------------------ */
/* The ring                                                                                         */

/* Appends one record; `rec` starts with a filled-in mt_rec_header whose size is a multiple of 8.     */
/* Waits while the ring is full; drops (and counts) only when memtrace is gone.                       */
void emit(void *rec)
{
    if (!g.active || !g.ring) return;
    PROF_BEGIN(t0);
    struct mt_rec_header *h = rec;
    h->tid = (uint32_t)mytid();
    uint64_t size = h->size;
    MT_ASSERT(size >= sizeof *h && size % 8 == 0 && size <= 8192, "a record is whole 8-byte words, at most 8 KiB");
    enter_critical();
    spin_lock(&g.ring_lock);
    uint64_t cap = g.ring_mask + 1;
    for (;;) {
        uint64_t tail = g.ring->tail;
        uint64_t at = tail & g.ring_mask;
        uint64_t pad = (at + size > cap) ? cap - at : 0;
        uint64_t head = __atomic_load_n(&g.ring->head, __ATOMIC_ACQUIRE);
        MT_ASSERT(head <= tail && tail - head <= cap && tail % 8 == 0, "the reader's head trails the tail by at most the ring");
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
        PROF_BEGIN(t1);
        mt_sys2(SYS_nanosleep, &t, 0);
        PROF_END(PROF_RING_FULL, t1);
    }
    spin_unlock(&g.ring_lock);
    leave_critical();
    PROF_END(PROF_EMIT, t0);
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

#ifdef MT_PROFILE
volatile uint64_t mt_prof_cycles[PROF_N], mt_prof_calls[PROF_N];

static void put_number(char *buf, size_t *at, uint64_t v)
{
    char d[24];
    int n = 0;
    do { d[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    while (n) buf[(*at)++] = d[--n];
}

static void put_text(char *buf, size_t *at, const char *text)
{
    while (*text) buf[(*at)++] = *text++;
}

/* One line per part: "memtrace-profile PART calls N ns T ns/call C", the cycles turned into time by a */
/* 20 ms calibration against CLOCK_MONOTONIC.                                                         */
void prof_report(void)
{
    static const char *const names[PROF_N] = {"segv-handler", "trap-handler", "sys-handler", "alloc-wrapper",
                                             "heap-lock", "emit", "ring-full-wait"};
    struct timespec a, b, nap = {0, 20 * 1000 * 1000};
    mt_sys2(SYS_clock_gettime, CLOCK_MONOTONIC, &a);
    uint64_t c0 = __builtin_ia32_rdtsc();
    mt_sys2(SYS_nanosleep, &nap, 0);
    mt_sys2(SYS_clock_gettime, CLOCK_MONOTONIC, &b);
    uint64_t c1 = __builtin_ia32_rdtsc();
    uint64_t ns = (uint64_t)(b.tv_sec - a.tv_sec) * 1000000000ULL + (uint64_t)b.tv_nsec - (uint64_t)a.tv_nsec;
    struct { struct timeval u, s; long rest[14]; } ru; /* struct rusage: the program's own CPU time */
    if (mt_sys2(SYS_getrusage, 0 /* RUSAGE_SELF */, &ru) == 0) {
        char line[96];
        size_t at = 0;
        put_text(line, &at, "memtrace-profile program user-us ");
        put_number(line, &at, (uint64_t)ru.u.tv_sec * 1000000 + (uint64_t)ru.u.tv_usec);
        put_text(line, &at, " sys-us ");
        put_number(line, &at, (uint64_t)ru.s.tv_sec * 1000000 + (uint64_t)ru.s.tv_usec);
        line[at++] = '\n';
        mt_sys3(SYS_write, 2, line, at);
    }
    for (int k = 0; k < PROF_N; k++) {
        char line[160];
        size_t at = 0;
        put_text(line, &at, "memtrace-profile ");
        put_text(line, &at, names[k]);
        put_text(line, &at, " calls ");
        put_number(line, &at, mt_prof_calls[k]);
        put_text(line, &at, " ns ");
        uint64_t t = (uint64_t)((double)mt_prof_cycles[k] * (double)ns / (double)(c1 - c0));
        put_number(line, &at, t);
        put_text(line, &at, " ns/call ");
        put_number(line, &at, mt_prof_calls[k] ? t / mt_prof_calls[k] : 0);
        line[at++] = '\n';
        mt_sys3(SYS_write, 2, line, at);
    }
}
#endif

void emit_stats_and_exit(int how, uint64_t value, uint64_t ip, uint64_t addr, const char *path)
{
    if (!g.active) return;
#ifdef MT_PROFILE
    prof_report();
#endif
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
