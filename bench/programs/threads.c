/* Threads sharing memory: N threads (argv[1], default 2) each sweep a shared array, reading every element
 * and updating their own interleaved quarter of it, then add into a shared counter under a mutex. Every
 * thread touches every page of the array, so under fault mode most faults happen while another thread may
 * have the same page open: the program the "windows at risk" column of bench/fault.sh is about. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define N 16384
#define ROUNDS 6
static int shared[N];
static long total;
static int threads;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *sweep(void *arg)
{
    int id = (int)(long)arg;
    long sum = 0;
    for (int r = 0; r < ROUNDS; r++)
        for (int i = 0; i < N; i++) {
            sum += shared[i];
            if (i % threads == id) shared[i] = r + id;
        }
    pthread_mutex_lock(&lock);
    total += sum;
    pthread_mutex_unlock(&lock);
    return 0;
}

int main(int argc, char **argv)
{
    threads = argc > 1 ? atoi(argv[1]) : 2;
    if (threads < 1 || threads > 64) return 2;
    pthread_t t[64];
    for (long i = 0; i < threads; i++) pthread_create(&t[i], 0, sweep, (void *)i);
    for (int i = 0; i < threads; i++) pthread_join(t[i], 0);
    printf("%ld\n", total);
    return 0;
}
