/* Three threads each run 1,500 rounds of malloc, calloc, realloc, posix_memalign and free on 24 slots of
 * blocks from 1 byte to 40 KB (every 100th round a large one), writing every 64th byte of a block when it is
 * made and reading it back before it goes. Then each thread, started again, reads and frees the blocks its
 * neighbour left behind: blocks freed by a thread other than the one that allocated them. Deterministic per
 * thread (its own generator), so the loads and stores of fill, total, work and drain per instruction are the
 * same under any tool. Prints each thread's sums, "misaligned" for any posix_memalign block off its
 * alignment, and each thread's stack address ("stack N 0x..."; a comparison leaves stacks out). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 3
#define ROUNDS 1500
#define SLOTS 24

static char *left[THREADS][SLOTS];
static size_t left_size[THREADS][SLOTS];
static long sums[THREADS][2];
static void *stack_of[THREADS];
static int misaligned;

__attribute__((noinline)) static void fill(char *p, size_t n, int v)
{
    for (size_t i = 0; i < n; i += 64) p[i] = (char)v;
}

__attribute__((noinline)) static long total(const char *p, size_t n)
{
    long s = 0;
    for (size_t i = 0; i < n; i += 64) s += p[i];
    return s;
}

__attribute__((noinline)) static void *work(void *arg)
{
    long id = (long)arg;
    char here;
    stack_of[id] = &here;
    unsigned x = (unsigned)id * 2654435761u + 1;
    char *slot[SLOTS] = {0};
    size_t size[SLOTS] = {0};
    long sum = 0;
    for (int r = 0; r < ROUNDS; r++) {
        x = x * 1103515245u + 12345u;
        int k = (int)((x >> 8) % SLOTS);
        size_t n = 1 + (x >> 12) % (r % 100 == 0 ? 40000 : 600);
        if (slot[k] && r % 7 == 0) { /* realloc: grows or shrinks, the old contents stay */
            size_t keep = size[k] < n ? size[k] : n;
            sum += total(slot[k], keep);
            slot[k] = realloc(slot[k], n);
            sum -= total(slot[k], keep);
            fill(slot[k], n, (int)r);
            size[k] = n;
            continue;
        }
        if (slot[k]) {
            sum += total(slot[k], size[k]);
            free(slot[k]);
        }
        if (r % 11 == 0) {
            size_t align = (size_t)16 << (r % 9);
            void *p = NULL;
            if (posix_memalign(&p, align, n) || (uintptr_t)p % align) misaligned = 1;
            slot[k] = p;
        } else if (r % 5 == 0) {
            slot[k] = calloc(n, 1);
            sum += total(slot[k], n); /* zeroes */
        } else {
            slot[k] = malloc(n);
        }
        fill(slot[k], n, (int)(r + id));
        size[k] = n;
    }
    for (int k = 0; k < SLOTS; k++) {
        left[id][k] = slot[k];
        left_size[id][k] = size[k];
    }
    sums[id][0] = sum;
    return NULL;
}

__attribute__((noinline)) static void *drain(void *arg)
{
    long id = (long)arg, from = (id + 1) % THREADS, sum = 0;
    for (int k = 0; k < SLOTS; k++) {
        if (!left[from][k]) continue;
        sum += total(left[from][k], left_size[from][k]);
        free(left[from][k]);
    }
    sums[id][1] = sum;
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, work, (void *)i);
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < THREADS; i++) printf("stack %d %p\n", i, stack_of[i]);
    for (long i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, drain, (void *)i);
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < THREADS; i++) printf("thread %d sums %ld %ld\n", i, sums[i][0], sums[i][1]);
    if (misaligned) printf("misaligned\n");
    return 0;
}
