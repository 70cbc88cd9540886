/*
 * A stand-in for the real agent in the launcher's tests: preloaded like it, it writes FAKE_EVENTS access
 * records (ip = i, addr = 0x10000 + 8 i, every other one a write) through the ring exactly as the contract
 * says (padding at the end, waiting for head when full), and an exit record from a destructor.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "memtrace_stream.h"

static struct mt_ring_header *hdr;
static unsigned char *data;

static void put(const void *rec, uint16_t size) {
    uint64_t cap = hdr->capacity;
    uint64_t tail = hdr->tail;
    uint64_t off = tail & (cap - 1);
    uint64_t pad = off + size > cap ? cap - off : 0;
    while (tail + pad + size - __atomic_load_n(&hdr->head, __ATOMIC_ACQUIRE) > cap) sched_yield();
    if (pad) {
        struct mt_rec_header p = {MT_PAD, 0, (uint16_t)pad, 0};
        memcpy(data + off, &p, sizeof p);
        tail += pad;
        off = 0;
    }
    memcpy(data + off, rec, size);
    __atomic_store_n(&hdr->tail, tail + size, __ATOMIC_RELEASE);
}

__attribute__((constructor)) static void start(void) {
    const char *path = getenv("MEMTRACE_RING");
    if (!path) return;
    int fd = open(path, O_RDWR);
    if (fd < 0) return;
    struct mt_ring_header h;
    if (pread(fd, &h, sizeof h, 0) != sizeof h || h.magic != MT_MAGIC) return;
    void *m = mmap(NULL, MT_HEADER_SIZE + h.capacity, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) return;
    hdr = m;
    data = (unsigned char *)m + MT_HEADER_SIZE;
    hdr->agent_pid = getpid();
    const char *regions = getenv("MEMTRACE_REGIONS");
    const char *autostart = getenv("MEMTRACE_AUTOSTART");
    struct mt_hello hello = {{MT_HELLO, 0, sizeof hello, (uint32_t)gettid()}, (uint64_t)getpid(), 4096, 0, 0,
                             (uint64_t)(regions ? atoi(regions) : -1) | (autostart && *autostart == '0' ? 0x100 : 0)};
    put(&hello, sizeof hello);
    const char *n = getenv("FAKE_EVENTS");
    long count = n ? atol(n) : 0;
    for (long i = 0; i < count; i++) {
        struct mt_access a = {{MT_ACCESS, (uint8_t)(i % 2 ? MT_ACC_WRITE : 0), sizeof a, (uint32_t)gettid()},
                              (uint64_t)i, 0x10000 + 8 * (uint64_t)i};
        put(&a, sizeof a);
    }
}

__attribute__((destructor)) static void finish(void) {
    if (!hdr) return;
    struct mt_exit x = {{MT_EXIT, MT_EXIT_NORMAL, sizeof x, (uint32_t)gettid()}, 0, 0, 0, 0, 0};
    put(&x, sizeof x);
    __atomic_store_n(&hdr->done, 1, __ATOMIC_RELEASE);
}
