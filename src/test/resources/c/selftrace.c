/*
 * selftrace.c: plays both halves of a program built by `memtrace cc` for the test of `memtrace run` on such
 * a program: it carries a memtrace_sites section (two sites in work(), which never runs) and, in place of
 * libmemtrace-rt.so, writes the .mtr file MEMTRACE_OUT names, by hand, as docs/compiled-in.md lays it out:
 * stored chunks, one per thread, a module record with an empty path (the loader's name for the main
 * program) followed by the mapping that names it, an allocation, a second thread, a free, the exit and the
 * end record. Built as a PIE, its sites are at run-time addresses the reader must place with the load bias.
 * Exits with status 3 so the test sees the status passed on. What it gets wrong on purpose: the accesses it
 * records are made up (work() is never run), and it writes every chunk at the end, not when a buffer fills.
 */
#define _GNU_SOURCE
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "memtrace_stream.h"

int table[16];
extern char mt_s1[], mt_i1[], mt_s2[], mt_i2[];

__attribute__((noinline)) void work(void) {
    __asm__ volatile(".globl mt_s1, mt_i1, mt_s2, mt_i2\n.hidden mt_s1, mt_i1, mt_s2, mt_i2\n"
                     "mt_s1: nop\n"
                     "mt_i1: movl table+4(%%rip), %%eax\n"
                     "mt_s2: nop\n"
                     "mt_i2: movq %%rax, 8(%%rdi)\n" ::: "rax", "memory");
}

__asm__(".section memtrace_sites,\"aR\",@progbits\n.balign 8\n"
        ".long mt_s1 - .\n.long mt_i1 - .\n.byte 1, 4, 0, 0x02\n.short 1, 1, 2, 2, 2, 0\n"
        ".long mt_s2 - .\n.long mt_i2 - .\n.byte 2, 8, 0, 0x00\n.short 1, 1, 0, 0, 0, 0\n"
        ".previous\n");

static FILE *out;
static pthread_mutex_t file_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_ulong sequence, order, chunks;

struct slots { unsigned char b[4096]; size_t n; };

static void slot(struct slots *s, uint64_t w0, uint64_t w1) {
    memcpy(s->b + s->n, &w0, 8);
    memcpy(s->b + s->n + 8, &w1, 8);
    s->n += 16;
}

/* An event tag and its record, zero-padded to whole slots. */
static void event(struct slots *s, const void *rec, size_t len) {
    slot(s, atomic_fetch_add(&sequence, 1), 1ull << 63 | (uint64_t)len << 8 | 1);
    memset(s->b + s->n, 0, (len + 15) & ~15ul);
    memcpy(s->b + s->n, rec, len);
    s->n += (len + 15) & ~15ul;
}

static void header(void *rec, uint8_t type, uint8_t flags, size_t size) {
    struct mt_rec_header *h = rec;
    memset(rec, 0, size);
    h->type = type, h->flags = flags, h->size = (uint16_t)size, h->tid = (uint32_t)gettid();
}

static void chunk(struct slots *s) {
    uint32_t h[8] = {0x4b4e4843, (uint32_t)gettid()};
    uint64_t o = atomic_fetch_add(&order, 1);
    memcpy(&h[2], &o, 8);
    h[4] = h[5] = (uint32_t)s->n;
    pthread_mutex_lock(&file_lock);
    fwrite(h, sizeof h, 1, out);
    fwrite(s->b, 1, s->n, out);
    pthread_mutex_unlock(&file_lock);
    atomic_fetch_add(&chunks, 1);
    s->n = 0;
}

static void alloc(struct slots *s, int fn, uint64_t caller, uint64_t result, uint64_t a0) {
    struct mt_alloc r;
    header(&r, MT_ALLOC, (uint8_t)fn, sizeof r);
    r.caller = caller, r.result = result, r.usable = fn == MT_FN_FREE ? 0 : a0, r.a[0] = a0;
    event(s, &r, sizeof r);
}

static void thread_event(struct slots *s, int flags, uint64_t value) {
    struct mt_thread r;
    header(&r, MT_THREAD, (uint8_t)flags, sizeof r);
    r.value = value;
    event(s, &r, sizeof r);
}

static pid_t main_tid;

static void *second(void *arg) {
    (void)arg;
    struct slots s = {0};
    thread_event(&s, MT_THREAD_START, (uint64_t)main_tid);
    slot(&s, (uint64_t)&table[2], (uint64_t)mt_s1);
    thread_event(&s, MT_THREAD_EXIT, 0);
    chunk(&s);
    return NULL;
}

static int bias_of_main(struct dl_phdr_info *info, size_t size, void *bias) {
    (void)size;
    *(uint64_t *)bias = info->dlpi_addr;
    return 1;
}

int main(void) {
    const char *path = getenv("MEMTRACE_OUT");
    if (path == NULL || !(out = fopen(path, "wb"))) return 99;
    main_tid = gettid();
    uint64_t file_header[8] = {0x31454c494652544dull, 1ull | 64ull << 32, (uint64_t)getpid(), 4096};
    fwrite(file_header, sizeof file_header, 1, out);

    static struct slots s;
    struct { struct mt_module m; } module;
    uint64_t bias = 0;
    dl_iterate_phdr(bias_of_main, &bias);
    header(&module, MT_MODULE, 0, sizeof module);
    module.m.load_bias = bias;
    event(&s, &module, sizeof module);

    char exe[4096] = {0}, line[4600];
    if (readlink("/proc/self/exe", exe, sizeof exe - 1) < 0) return 98;
    FILE *maps = fopen("/proc/self/maps", "r");
    while (maps && fgets(line, sizeof line, maps)) {
        unsigned long start, end, offset;
        char name[4096] = "";
        if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %4095s", &start, &end, &offset, name) == 4 && offset == 0 && !strcmp(name, exe)) {
            struct { struct mt_mapping m; char path[4096]; } r;
            size_t len = (sizeof r.m + strlen(exe) + 7) & ~7ul;
            header(&r, MT_MAPPING, 0, len);
            r.m.start = start, r.m.end = end, r.m.offset = 0, r.m.prot = 1, r.m.path_len = (uint32_t)strlen(exe);
            memcpy(r.path, exe, strlen(exe));
            event(&s, &r, len);
            break;
        }
    }
    if (maps) fclose(maps);

    long *block = malloc(32);
    alloc(&s, MT_FN_MALLOC, (uint64_t)mt_i2, (uint64_t)block, 32);
    pthread_t t;
    pthread_create(&t, NULL, second, NULL);
    pthread_join(t, NULL);
    slot(&s, (uint64_t)&table[1], (uint64_t)mt_s1);
    slot(&s, (uint64_t)&block[1], (uint64_t)mt_s2);
    alloc(&s, MT_FN_FREE, (uint64_t)mt_i1, 0, (uint64_t)block);
    free(block);

    struct mt_exit x;
    header(&x, MT_EXIT, MT_EXIT_NORMAL, sizeof x);
    x.value = 3;
    event(&s, &x, sizeof x);
    chunk(&s);
    uint64_t end[4] = {0x444e4545, atomic_load(&chunks), 0, 0};
    fwrite(end, sizeof end, 1, out);
    fclose(out);
    puts("selftrace done");
    return 3;
}
