/* Threads whose accesses are known exactly (RewriteLackeyTest): 3 workers, started together by a barrier, each
 * adding into its own cells[k][] 600 * (k + 1) times, one load and one store each time (volatile: gcc keeps
 * both), while main adds into mains[] 900 times; then main joins them and prints what the arrays sum to. Each
 * worker runs its own function (work0, work1, work2), so an instruction's accesses name their worker whatever
 * number a tool gives its thread. Output: one line, "sum S" (the same natively and under any tool). */
#include <pthread.h>
#include <stdio.h>

#define WORKERS 3
#define ROUNDS 600
#define MAIN_ROUNDS 900

volatile long cells[WORKERS][64];
volatile long mains[64];
static pthread_barrier_t start;

#define WORKER(k)                                                                                                  \
    __attribute__((noinline)) static void *work##k(void *arg)                                                      \
    {                                                                                                              \
        (void)arg;                                                                                                 \
        pthread_barrier_wait(&start);                                                                              \
        for (long i = 0; i < ROUNDS * (k + 1); i++) cells[k][i & 63] += i;                                         \
        return 0;                                                                                                  \
    }
WORKER(0)
WORKER(1)
WORKER(2)

int main(void)
{
    void *(*work[WORKERS])(void *) = {work0, work1, work2};
    pthread_t t[WORKERS];
    pthread_barrier_init(&start, 0, WORKERS + 1);
    for (int k = 0; k < WORKERS; k++) pthread_create(&t[k], 0, work[k], 0);
    pthread_barrier_wait(&start);
    for (long i = 0; i < MAIN_ROUNDS; i++) mains[i & 63] += i;
    for (int k = 0; k < WORKERS; k++) pthread_join(t[k], 0);
    long sum = 0;
    for (int k = 0; k < WORKERS; k++)
        for (int i = 0; i < 64; i++) sum += cells[k][i];
    for (int i = 0; i < 64; i++) sum += mains[i];
    printf("sum %ld\n", sum);
    return 0;
}
