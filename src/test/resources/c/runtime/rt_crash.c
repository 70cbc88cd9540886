/* Runtime test: n probed stores, then the end named by argv[1]: abort, null (a store through NULL),
 * kill (SIGKILL to itself, after a pause that lets the writer catch up), term (SIGTERM to itself, which it
 * ignored, then handled, then left to its default action), _exit (status 5), or
 * thread-null (a store through NULL while a worker thread that made n stores goes on storing). */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "mt_probe.h"

static long n;
static volatile int terms;

static void on_term(int sig) { terms += sig == SIGTERM; }
static volatile int worker_ready;

static void *worker(void *arg)
{
    long *b = arg;
    for (long i = 0;; i++) {
        MT_STORE8(&b[i % n], i);
        if (i == n - 1) worker_ready = 1;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    n = atol(argv[2]);
    long *a = malloc((size_t)n * sizeof(long));
    printf("ARRAY %lx\n", (unsigned long)a);
    mt_print_sites();
    fflush(stdout);
    for (long i = 0; i < n; i++) MT_STORE8(&a[i], i);
    if (!strcmp(argv[1], "abort")) abort();
    if (!strcmp(argv[1], "null")) *(volatile long *)0 = 1;
    if (!strcmp(argv[1], "kill")) {
        usleep(500 * 1000);
        kill(getpid(), SIGKILL);
    }
    if (!strcmp(argv[1], "_exit")) _exit(5);
    if (!strcmp(argv[1], "term")) {
        signal(SIGTERM, SIG_IGN);
        kill(getpid(), SIGTERM);
        signal(SIGTERM, on_term);
        kill(getpid(), SIGTERM);
        printf("TERMS %d\n", terms);
        fflush(stdout);
        if (signal(SIGTERM, SIG_DFL) != on_term) printf("LOST HANDLER\n");
        kill(getpid(), SIGTERM);
    }
    if (!strcmp(argv[1], "thread-null")) {
        long *b = malloc((size_t)n * sizeof(long));
        printf("WORKER_ARRAY %lx\n", (unsigned long)b);
        fflush(stdout);
        pthread_t t;
        pthread_create(&t, NULL, worker, b);
        while (!worker_ready) usleep(1000);
        *(volatile long *)0 = 1;
    }
    return 0;
}
