/* rewrite_timer.c: threads libc starts by itself, for memtrace run --mode rewrite (RewriteThreadsTest).
 * A POSIX timer with SIGEV_THREAD notification: glibc starts a helper thread at the first timer_create and,
 * for each expiry, a thread that runs tick(), both through its internal pthread_create, not the exported
 * one the runtime wraps. Three expiries, each waited for with a semaphore; each tick stores 100 ints into its
 * own row of rows with fill_t. Prints "3 ticks, sum S". */
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>

#define N 100
static int rows[3][N];
static sem_t done;
static int ticks;

__attribute__((noinline)) void fill_t(int *a, int k)
{
    for (int i = 0; i < N; i++) a[i] = i * k;
}

static void tick(union sigval v)
{
    (void)v;
    int k = __atomic_fetch_add(&ticks, 1, __ATOMIC_SEQ_CST);
    if (k < 3) fill_t(rows[k], k + 1);
    sem_post(&done);
}

int main(void)
{
    sem_init(&done, 0, 0);
    struct sigevent ev = {0};
    ev.sigev_notify = SIGEV_THREAD;
    ev.sigev_notify_function = tick;
    timer_t t;
    if (timer_create(CLOCK_MONOTONIC, &ev, &t) != 0) { perror("timer_create"); return 1; }
    struct itimerspec once = {.it_value = {.tv_nsec = 1000000}};
    for (int i = 0; i < 3; i++) {
        if (timer_settime(t, 0, &once, NULL) != 0) { perror("timer_settime"); return 1; }
        while (sem_wait(&done) != 0) {}
    }
    timer_delete(t);
    long s = 0;
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < N; i++) s += rows[k][i];
    printf("%d ticks, sum %ld\n", ticks, s);
    return 0;
}
