/* The summary's counts of threads whose checks are all inline (CheckCountTest): `./thread_count N MODE` reads a[N]
 * and b[3] in two() (one run of two inlined checks) in main and, by MODE, in a thread that main joins (1), one
 * still running when main exits (2), or in none (0); the thread calls nothing of the check runtime. main's checks
 * are the same in every mode; strlen(argv[1]) is the program's one libc call. */
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *a, *b;
static long n;
static sem_t done;
static pthread_t t;

__attribute__((noinline)) int two(char *x, long i, char *y, long j)
{
    return x[i] + y[j];
}

static void *worker(void *running)
{
    long r = two(a, n, b, 3);
    if (running) {
        sem_post(&done);
        for (;;) pause();
    }
    return (void *)r;
}

int main(int argc, char **argv)
{
    a = calloc(16, 1);
    b = calloc(16, 1);
    n = atol(argv[1]);
    long mode = atol(argv[2]);
    int r = two(a, n, b, 3) + (int)strlen(argv[1]);
    sem_init(&done, 0, 0);
    if (mode == 1) { pthread_create(&t, NULL, worker, NULL); pthread_join(t, NULL); }
    if (mode == 2) { pthread_create(&t, NULL, worker, (void *)1); sem_wait(&done); }
    free(a);
    free(b);
    return r & 1;
}
