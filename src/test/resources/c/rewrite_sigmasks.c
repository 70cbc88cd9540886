/* rewrite_sigmasks.c: a SIGUSR1 handler that runs while a call waits with a mask that blocks every other
 * signal, for memtrace run --mode rewrite's int3 fallback (RewriteInt3Test). SIGUSR1 is blocked and raised,
 * so it is pending; sigsuspend, ppoll, pselect, epoll_pwait and epoll_pwait2 each unblock it for their wait
 * alone, and the handler runs with their mask: SIGTRAP and SIGSEGV blocked natively. The handler formats a
 * line with snprintf (libc's short instructions trap) and stores its count into seen[]. Prints
 * "5 handled: sigsuspend ppoll pselect epoll_pwait epoll_pwait2, last LINE". */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <unistd.h>

static volatile int handled;
static int seen[8];
static char line[128];

static void on_usr1(int sig)
{
    (void)sig;
    snprintf(line, sizeof line, "%d|%-6.3f|%s|%#x|%e\n", handled * 37, handled / 7.0, "str", handled * 255, handled * 1e10);
    seen[handled] = handled + 1;
    handled++;
}

int main(void)
{
    struct sigaction a;
    memset(&a, 0, sizeof a);
    a.sa_handler = on_usr1;
    sigaction(SIGUSR1, &a, NULL);
    sigset_t usr1, wait;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigprocmask(SIG_BLOCK, &usr1, NULL);
    sigfillset(&wait);
    sigdelset(&wait, SIGUSR1);
    const char *names[5] = {0};
    struct timespec zero = {0, 0}, second = {1, 0};
    int ep = epoll_create1(0);
    for (int k = 0; k < 5; k++) {
        raise(SIGUSR1); /* pending until the call below opens it */
        int rc = 0;
        switch (k) {
        case 0: names[k] = "sigsuspend"; rc = sigsuspend(&wait); break;
        case 1: names[k] = "ppoll"; rc = ppoll(NULL, 0, &zero, &wait); break;
        case 2: names[k] = "pselect"; rc = pselect(0, NULL, NULL, NULL, &zero, &wait); break;
        case 3: {
            struct epoll_event e;
            names[k] = "epoll_pwait";
            rc = epoll_pwait(ep, &e, 1, 1000, &wait); /* a wait with nothing ready: the signal ends it */
            break;
        }
        case 4: {
            struct epoll_event e;
            names[k] = "epoll_pwait2";
            rc = epoll_pwait2(ep, &e, 1, &second, &wait);
            break;
        }
        }
        if (rc != -1 || errno != EINTR || handled != k + 1) {
            printf("%s: rc %d, errno %d, %d handled\n", names[k], rc, errno, handled);
            return 1;
        }
    }
    printf("%d handled:", handled);
    for (int k = 0; k < 5; k++) printf(" %s", names[k]);
    printf(", seen %d %d %d %d %d, last %s", seen[0], seen[1], seen[2], seen[3], seen[4], line);
    return 0;
}
