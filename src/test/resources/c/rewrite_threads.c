/* rewrite_threads.c: argv[1] threads (at most 8), each filling its own 1000-int row of data with fill_w;
 * main joins them and sums every row with sum_w. For memtrace run --mode rewrite with libc rewritten: each
 * thread's first accesses are libc's start_thread's, made with every signal blocked (RewriteThreadsTest). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define N 1000
static int data[8][N];

__attribute__((noinline)) void fill_w(int *a, int k)
{
    for (int i = 0; i < N; i++) a[i] = i * k;
}

static void *worker(void *p)
{
    long k = (long)p;
    fill_w(data[k], (int)k + 1);
    return NULL;
}

__attribute__((noinline)) long sum_w(void)
{
    long s = 0;
    for (int t = 0; t < 8; t++)
        for (int i = 0; i < N; i++) s += data[t][i];
    return s;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4;
    if (n > 8) n = 8;
    pthread_t t[8];
    for (long k = 0; k < n; k++)
        if (pthread_create(&t[k], NULL, worker, (void *)k) != 0) return 1;
    for (int k = 0; k < n; k++) pthread_join(t[k], NULL);
    printf("%ld\n", sum_w());
    return 0;
}
