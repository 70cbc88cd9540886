/* Concurrent workers (SkeletonTraceTest), as real programs' thread pools run (zstd's): three threads at once,
 * each running loops a skeleton computes over blocks of its own (allocated by main before any thread starts, so
 * the heap is the same in every run), copying and clearing them with memcpy and memset (block events, whose
 * line ends with its "via", not its tid). How the threads interleave changes from run to run, and so does the
 * order of the three threads' block events in the trace; each thread's own events, in their order, do not. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4096
#define T 3
struct job { long *a, *b; long n, k, r; };
static pthread_barrier_t round_start; /* each round of the three at once: their events interleave */

__attribute__((noinline)) void fill(long *a, long n, long k) { for (long i = 0; i < n; i++) a[i] = i * k + 1; }
__attribute__((noinline)) long sum(const long *a, long n) { long s = 0; for (long i = 0; i < n; i++) s += a[i]; return s; }

static void *worker(void *arg) {
    struct job *j = arg;
    for (long r = 0; r < 4; r++) {
        pthread_barrier_wait(&round_start);
        fill(j->a, j->n, j->k + r);
        memcpy(j->b, j->a, (size_t) (j->n - r) * sizeof *j->a);
        j->r += sum(j->b, j->n);
        memset(j->a, 0, (size_t) (j->n - r) * sizeof *j->a);
    }
    return 0;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : N, r = 0;
    struct job jobs[T];
    pthread_t t[T];
    for (int i = 0; i < T; i++) jobs[i] = (struct job) { malloc(n * sizeof(long)), malloc(n * sizeof(long)), n, i + 2, 0 };
    pthread_barrier_init(&round_start, 0, T);
    for (int i = 0; i < T; i++) pthread_create(&t[i], 0, worker, &jobs[i]);
    for (int i = 0; i < T; i++) {
        pthread_join(t[i], 0);
        r += jobs[i].r;
    }
    for (int i = 0; i < T; i++) { free(jobs[i].a); free(jobs[i].b); }
    printf("%ld\n", r);
    return 0;
}
