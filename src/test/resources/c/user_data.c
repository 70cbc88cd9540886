/* Two threads walk their own heap arrays (several .mtr chunks each with a small buffer), then main frees
 * them and says hello on standard output: the program behind memtrace's tests of damaged traces and of
 * outputs that must not destroy anything (UserDataTest, ReaderFuzzTest). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { N = 3000, ROUNDS = 8 };

static void *walk(void *arg) {
    long *a = arg;
    for (int r = 0; r < ROUNDS; r++)
        for (int i = 0; i < N; i++) a[i] += i * r;
    return NULL;
}

int main(void) {
    long *a = calloc(N, sizeof *a), *b = calloc(N, sizeof *b);
    pthread_t t;
    pthread_create(&t, NULL, walk, b);
    walk(a);
    pthread_join(t, NULL);
    long sum = a[N - 1] + b[N - 1];
    free(a);
    free(b);
    printf("hello from the program %ld\n", sum);
    return 0;
}
