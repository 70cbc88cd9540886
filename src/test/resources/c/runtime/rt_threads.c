/* Runtime test: the main thread and two workers each make n probed stores into their own array. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "mt_probe.h"

static long n;

static void *worker(void *arg)
{
    long *a = arg;
    for (long i = 0; i < n; i++) MT_STORE8(&a[i], i);
    return NULL;
}

int main(int argc, char **argv)
{
    n = argc > 1 ? atol(argv[1]) : 1000;
    long *a[3];
    for (int k = 0; k < 3; k++) {
        a[k] = malloc((size_t)n * sizeof(long));
        printf("ARRAY %d %lx\n", k, (unsigned long)a[k]);
    }
    printf("MAIN %d\n", gettid());
    mt_print_sites();
    fflush(stdout);
    pthread_t t[2];
    for (int k = 0; k < 2; k++) pthread_create(&t[k], NULL, worker, a[k + 1]);
    for (long i = 0; i < n; i++) MT_STORE8(&a[0][i], i);
    for (int k = 0; k < 2; k++) pthread_join(t[k], NULL);
    return 0;
}
