/* A timer signal every 100 µs while the main loop reads and writes `page.table`: most signals arrive in the
 * middle of an instruction's step, while the page is open for it. The handler counts in `page.ticks`, on
 * the same page: a handler let run with that page open would go unseen. Prints what it did. */
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>

struct { long table[256]; long ticks; } page __attribute__((aligned(4096)));

static void on_alarm(int sig)
{
    (void)sig;
    page.ticks = page.ticks + 1;
}

int main(void)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, 0);
    struct itimerval on = {{0, 100}, {0, 100}}, off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &on, 0);
    long sum = 0;
    for (int r = 0; r < 16; r++)
        for (int i = 0; i < 256; i++) {
            page.table[i] = page.table[i] + i;
            sum += page.table[i];
        }
    setitimer(ITIMER_REAL, &off, 0);
    sigaction(SIGALRM, &(struct sigaction){.sa_handler = SIG_IGN}, 0);
    printf("sum %ld ticks %ld\n", sum, page.ticks);
    return 0;
}
