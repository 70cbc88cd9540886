/* Four threads allocating, filling and freeing blocks at once (RunCheckTest): `./run_threads good` must run
 * silently under `memtrace run --check`; `./run_threads bad` makes thread 2 read one int past a block of
 * 40 bytes (its 151st block) once. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bad;

static void *work(void *arg)
{
    long id = (long)arg, sum = 0;
    for (int r = 0; r < 200; r++) {
        int n = 10 + (r % 50);
        int *a = malloc(n * sizeof *a); /* ALLOC:threads */
        for (int i = 0; i < n; i++) a[i] = (int)(i + id);
        for (int i = 0; i < n; i++) sum += a[i];
        if (bad && id == 2 && r == 150) sum += a[n]; /* BAD:threads */
        free(a);
    }
    return (void *)sum;
}

int main(int argc, char **argv)
{
    bad = argc > 1 && strcmp(argv[1], "bad") == 0;
    pthread_t t[4];
    for (long i = 0; i < 4; i++) pthread_create(&t[i], NULL, work, (void *)i);
    long total = 0;
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(t[i], &r);
        total += (long)r;
    }
    printf("total %ld\n", total);
    return 0;
}
