/*
 * Fixture for memtrace cachesim and convert: accesses whose cache behaviour follows from the program alone.
 * main reads the 4 KiB global `table` once in order (1024 loads of 4 bytes: 64 lines, each missing once
 * in a cold cache), stores one byte per 64-byte line of a 4 KiB heap block (64 stores, 64 misses), adds to
 * the global `counter` 10 times with one read-modify-write instruction (lock add), copies the block with
 * memcpy into a second line-aligned 4 KiB block (one block event: 64 lines read, 64 written), and a second
 * thread stores 512 ints into the global `other` (2 KiB: 32 lines).
 * Built -O0 -no-pie: loop counters live on the stack, which memtrace does not trace, so every traced access
 * is one of those above (plus whatever libc does to traced memory, which the tests do not count).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

int table[1024] __attribute__((aligned(64)));
int other[512] __attribute__((aligned(64)));
int counter __attribute__((aligned(64)));

static void *writer(void *arg) {
    for (int i = 0; i < 512; i++) other[i] = i;
    return arg;
}

int main(void) {
    long sum = 0;
    for (int i = 0; i < 1024; i++) sum += table[i];
    char *block = aligned_alloc(64, 4096);
    for (int i = 0; i < 4096; i += 64) block[i] = 1;
    for (int i = 0; i < 10; i++) __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
    char *copy = aligned_alloc(64, 4096);
    memcpy(copy, block, 4096);
    pthread_t t;
    pthread_create(&t, NULL, writer, NULL);
    pthread_join(t, NULL);
    free(copy);
    free(block);
    return (int) (sum & 1);
}
