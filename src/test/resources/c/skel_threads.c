/* Two threads run the same skeleton loop at the same time, each over its own half of a table, after a
 * barrier (SkeletonTraceTest): each thread's replay must regenerate its own loads, in order. */
#include <pthread.h>
#include <stdio.h>

#define N 4096
long table[N];
static pthread_barrier_t start;

__attribute__((noinline)) long sum(const long *a, long n) { long s = 0; for (long i = 0; i < n; i++) s += a[i]; return s; }

static void *worker(void *arg) {
    long s = 0;
    pthread_barrier_wait(&start);
    for (int r = 0; r < 5; r++) s += sum(arg, N / 2 - r);
    return (void *) s;
}

int main(void) {
    for (int i = 0; i < N; i++) table[i] = i;
    pthread_barrier_init(&start, 0, 2);
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, worker, table + i * (N / 2));
    long r = 0;
    for (int i = 0; i < 2; i++) { void *x; pthread_join(t[i], &x); r += (long) x; }
    printf("%ld\n", r);
    return 0;
}
