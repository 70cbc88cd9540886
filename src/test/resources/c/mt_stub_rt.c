/*
 * mt_stub_rt.c: a stand-in for libmemtrace-rt.so that the rewriter's tests link (as an object) into
 * programs built from instrumented assembly. It plays the runtime's side of docs/compiled-in.md just far
 * enough to run them: it defines the TLS cursor __memtrace_cursor, and since a thread's cursor starts at 0
 * its first probe faults on `mov A,d(C)` (d 0 or a disp8, C the probe's cursor register) with C 0, which
 * it recognizes with the runtime's own decoder (agent/include/mt_probe.h, included: compile with -I);
 * the SIGSEGV handler then gives the thread a zeroed 64 MiB buffer followed by a guard page, points C and the cursor at it and resumes.
 *
 * At exit, when MT_STUB_OUT names a file, it writes every thread's records there as text:
 *
 *   T <thread number, in the order threads first probed>
 *   <insn address> <kind> <size> <access> <flags> <w0> <weight_ma> <weight_aia> <block_refs>
 *
 * addresses and w0 in hex, the rest decimal, one line per record in program order. The site of a record
 * is looked up in the main program's memtrace_sites table (__start_/__stop_memtrace_sites); a site it does
 * not hold (one of a shared library) is written `? <site> <w0>`. <insn address> is the run-time address of
 * the instrumented instruction (the link-time one for -no-pie programs).
 *
 * Without MT_STUB_OUT a full buffer is emptied and reused (the records are lost, as the runtime loses
 * them without MEMTRACE_OUT); MT_STUB_COUNT then makes it print the number of records at exit.
 *
 * What it gets wrong, on purpose: with MT_STUB_OUT a full buffer aborts the program (tests are small)
 * instead of being flushed; records written after its destructor ran (other destructors, atexit handlers) are lost; threads
 * beyond 256 abort.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "mt_probe.h" /* the runtime's recognizer of a probe's first store */

__thread char *__memtrace_cursor;

/* Executables' objects refer to the runtime's memtrace_start (docs/compiled-in.md, "The probe"). */
void memtrace_start(void) {}

struct site {
    int32_t probe, insn;
    uint8_t kind, size, access, flags;
    uint16_t weight_ma, weight_aia, block_refs, block_ma, block_aia, reserved;
};

extern const struct site __start_memtrace_sites[] __attribute__((weak));
extern const struct site __stop_memtrace_sites[] __attribute__((weak));

#define BUFFER_BYTES (64UL << 20)
#define MAX_THREADS 256

static char *buffers[MAX_THREADS];
static int thread_count;
static int discard;              /* no MT_STUB_OUT: full buffers start over */
static unsigned long discarded;  /* records dropped that way */

/* The buffer whose end a group of `bytes` starting at p does not fit before; NULL when none. */
static char *overflowed_buffer(const char *p, long bytes)
{
    for (int t = 0; t < thread_count && t < MAX_THREADS; t++)
        if (p <= buffers[t] + BUFFER_BYTES && p + bytes >= buffers[t] + BUFFER_BYTES) return buffers[t];
    return NULL;
}

/* The cursor's offset from the thread pointer, which an executable's group probe reads as `%fs:disp32`. */
static long cursor_tpoff(void)
{
    char *tp;
    __asm__("mov %%fs:0, %0" : "=r"(tp));
    return (char *) &__memtrace_cursor - tp;
}

static char *new_buffer(void)
{
    long page = sysconf(_SC_PAGESIZE);
    char *b = mmap(NULL, BUFFER_BYTES + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b == MAP_FAILED) abort();
    mprotect(b + BUFFER_BYTES, page, PROT_NONE);
    int n = __atomic_fetch_add(&thread_count, 1, __ATOMIC_SEQ_CST);
    if (n >= MAX_THREADS) abort();
    buffers[n] = b;
    return b;
}

static void on_segv(int sig, siginfo_t *info, void *context)
{
    (void) info;
    ucontext_t *uc = context;
    greg_t *g = uc->uc_mcontext.gregs;
    const unsigned char *pc = (const unsigned char *) g[REG_RIP];
    long disp = 0;
    int loop;
    int c = mt_probe_store(pc, &disp, &loop, cursor_tpoff());
    /* a loop's probes advance only the register: the cursor in memory is where the loop began */
    if (c >= 0 && loop && __memtrace_cursor && (char *) g[c] > __memtrace_cursor && overflowed_buffer((char *) g[c], disp))
        __memtrace_cursor = (char *) g[c];
    if (c >= 0 && g[c] == 0 && __memtrace_cursor == NULL) {
        __memtrace_cursor = new_buffer();
        g[c] = (greg_t) __memtrace_cursor;
        return;
    }
    char *guard = c >= 0 ? (char *) g[c] : NULL;
    char *full_buffer = c >= 0 && guard == __memtrace_cursor && discard ? overflowed_buffer(guard, disp) : NULL;
    if (full_buffer) {
        /* Without MT_STUB_OUT a full buffer is discarded, as the runtime does without MEMTRACE_OUT. */
        __atomic_fetch_add(&discarded, (unsigned long) (guard - full_buffer) / 16, __ATOMIC_SEQ_CST);
        __memtrace_cursor = full_buffer;
        memset(__memtrace_cursor, 0, BUFFER_BYTES);
        g[c] = (greg_t) __memtrace_cursor;
        return;
    }
    static const char full[] = "mt_stub_rt: a buffer is full or the program faulted\n";
    if (write(2, full, sizeof full - 1) < 0) { /* nothing more to do */ }
    signal(sig, SIG_DFL); /* the instruction faults again and the program dies as it would have */
}

__attribute__((constructor(101))) static void install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGSEGV, &sa, NULL);
    const char *path = getenv("MT_STUB_OUT");
    discard = path == NULL || *path == '\0';
}

struct keyed { uintptr_t at; const struct site *s; };

static int by_address(const void *a, const void *b)
{
    uintptr_t x = ((const struct keyed *) a)->at, y = ((const struct keyed *) b)->at;
    return x < y ? -1 : x > y;
}

__attribute__((destructor)) static void dump(void)
{
    const char *path = getenv("MT_STUB_OUT");
    if (path == NULL || *path == '\0') {
        if (getenv("MT_STUB_COUNT") != NULL) {
            unsigned long held = 0;
            for (int t = 0; t < thread_count; t++) {
                const uint64_t *end = (const uint64_t *) (buffers[t] + BUFFER_BYTES);
                for (const uint64_t *r = (const uint64_t *) buffers[t]; r < end && r[1] != 0; r += 2) held++;
            }
            fprintf(stderr, "mt_stub_rt: %lu records\n", discarded + held);
        }
        return;
    }
    FILE *out = fopen(path, "w");
    if (out == NULL) return;
    size_t n = __start_memtrace_sites ? (size_t) (__stop_memtrace_sites - __start_memtrace_sites) : 0;
    struct keyed *keys = calloc(n + 1, sizeof *keys);
    for (size_t i = 0; i < n; i++) {
        const struct site *s = &__start_memtrace_sites[i];
        keys[i].at = (uintptr_t) &s->probe + s->probe;
        keys[i].s = s;
    }
    qsort(keys, n, sizeof *keys, by_address);
    for (int t = 0; t < thread_count; t++) {
        fprintf(out, "T %d\n", t);
        const uint64_t *end = (const uint64_t *) (buffers[t] + BUFFER_BYTES);
        for (const uint64_t *r = (const uint64_t *) buffers[t]; r < end && r[1] != 0; r += 2) {
            struct keyed key = { (uintptr_t) r[1], NULL };
            struct keyed *k = bsearch(&key, keys, n, sizeof *keys, by_address);
            if (k == NULL) {
                fprintf(out, "? %lx %lx\n", (unsigned long) r[1], (unsigned long) r[0]);
                continue;
            }
            const struct site *s = k->s;
            fprintf(out, "%lx %d %d %d %d %lx %d %d %d\n", (unsigned long) ((uintptr_t) &s->insn + s->insn),
                    s->kind, s->size, s->access, s->flags, (unsigned long) r[0], s->weight_ma, s->weight_aia,
                    s->block_refs);
        }
    }
    fclose(out);
    free(keys);
}
