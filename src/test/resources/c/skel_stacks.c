/* Threads made after the main thread has written many records, each touching its own stack
 * (SkeletonTraceTest): the full build writes more records than the skeleton build, so the runtime's buffer
 * pool has grown further when each thread is made, and the unwind tables malloc's stacks need are sized
 * from each build's .eh_frame. The runtime's own mappings must not move the threads' stacks: both builds'
 * threads, and every run's, touch the same stack addresses. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define N 2048
long table[N];

__attribute__((noinline)) void fill(long *a, long n, long k) { for (long i = 0; i < n; i++) a[i] = i * k + 1; }
__attribute__((noinline)) long sum(const long *a, long n) { long s = 0; for (long i = 0; i < n; i++) s += a[i]; return s; }

static void *worker(void *arg) {
    long local[256];
    fill(local, 256, (long) arg);
    return (void *) sum(local, 256);
}

int main(void) {
    long r = 0;
    pthread_t t[3];
    for (int i = 0; i < 3; i++) {
        char *p = malloc(100 + 50 * i); /* allocation stacks: the unwind tables */
        for (int k = 0; k < 8 * (i + 1); k++) {
            fill(table, N, k);
            r += sum(table, N);
        }
        p[0] = (char) r;
        r += p[0];
        free(p);
        pthread_create(&t[i], 0, worker, (void *) (long) (i + 2));
    }
    for (int i = 0; i < 3; i++) { void *x; pthread_join(t[i], &x); r += (long) x; }
    printf("%ld\n", r);
    return 0;
}
