/*
 * mt_stub_rt.c: a stand-in for libmemtrace-rt.so that the rewriter's tests link (as an object) into
 * programs built from instrumented assembly. It plays the runtime's side of docs/compiled-in.md just far
 * enough to run them: it defines the TLS cursor __memtrace_cursor, and since a thread's cursor starts at 0
 * its first probe faults on `mov A,d(C)` (d 0 or a disp8, C the probe's cursor register) with C 0;
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

/* A probe in a loop that keeps its cursor in C (docs/compiled-in.md, "A loop's cursor") has no load    */
/* before its first store `mov A,d(C)` (len bytes at pc): `lea disp32(%rip),A` and `mov A,d+8(C)`, the  */
/* slot's site word, follow it instead.                                                                  */
static int loop_store(const unsigned char *pc, int len, long disp)
{
    const unsigned char *lea = pc + len, *site = lea + 7;
    int a = ((pc[2] >> 3) & 7) | (pc[0] & 4) << 1;
    if ((lea[0] & 0xfb) != 0x48 || lea[1] != 0x8d || (lea[2] & 0xc7) != 0x05) return 0;
    if ((((lea[2] >> 3) & 7) | (lea[0] & 4) << 1) != a) return 0;
    return site[0] == pc[0] && site[1] == 0x89 && site[2] == (0x40 | (pc[2] & 0x3f)) && (signed char)site[3] == disp + 8;
}

/* The probe's first store, `mov A,d(C)` (d 0 or a disp8) right after `mov %fs:(T),C` or, in an         */
/* executable's group probe, `mov %fs:disp32,C` with disp32 the cursor's offset from the thread pointer:  */
/* or followed by a loop probe's site store: the context index of C, and d in *disp; -1 when the bytes at */
/* pc are not that.                                                                                       */
static int probe_store(const unsigned char *pc, long *disp, int *loop)
{
    *loop = 0;
    static const int gregs[16] = {-1, REG_RCX, REG_RDX, REG_RBX, -1, -1, REG_RSI, REG_RDI,
                                  REG_R8, REG_R9, REG_R10, REG_R11, -1, -1, REG_R14, REG_R15};
    if ((pc[0] & 0xfa) != 0x48 || pc[1] != 0x89) return -1;
    int mod = pc[2] >> 6, rm = pc[2] & 7;
    if (mod > 1 || rm == 4 || rm == 5) return -1;
    int c = rm | (pc[0] & 1) << 3;
    *disp = mod ? (signed char) pc[3] : 0;
    const unsigned char *local = pc - 9;
    int32_t offset;
    memcpy(&offset, local + 5, 4);
    char *tp;
    __asm__("mov %%fs:0, %0" : "=r"(tp));
    if (local[0] == 0x64 && (local[1] & 0xfb) == 0x48 && local[2] == 0x8b && (local[3] & 0xc7) == 0x04 && local[4] == 0x25
        && (((local[3] >> 3) & 7) | (local[1] & 4) << 1) == c && offset == (char *) &__memtrace_cursor - tp)
        return gregs[c];
    const unsigned char *load = pc - 4;
    if (load[0] == 0x64 && (load[1] & 0xfa) == 0x48 && load[2] == 0x8b && load[3] >> 6 == 0
        && (((load[3] >> 3) & 7) | (load[1] & 4) << 1) == c)
        return gregs[c];
    *loop = loop_store(pc, mod ? 4 : 3, *disp);
    return *loop ? gregs[c] : -1;
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
    int c = probe_store(pc, &disp, &loop);
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
