/* Two threads each add to their own counter N times at once. With no argument the counters are adjacent
 * fields of one 64-byte-aligned struct (one cache line: false sharing); with "padded" they are 64 bytes
 * apart in another struct (two lines: none). main reads both counters after the joins and prints them. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define N 20000

struct pair {
    volatile long a;
    volatile long b;
} __attribute__((aligned(64)));

struct padded {
    volatile long a;
    char pad[56];
    volatile long b;
} __attribute__((aligned(64)));

struct pair pair;
struct padded padded;
static pthread_barrier_t start;

static void *work(void *arg) {
    volatile long *counter = arg;
    pthread_barrier_wait(&start);
    for (int i = 0; i < N; i++) *counter += 1;
    return NULL;
}

int main(int argc, char **argv) {
    int pad = argc > 1 && strcmp(argv[1], "padded") == 0;
    volatile long *a = pad ? &padded.a : &pair.a, *b = pad ? &padded.b : &pair.b;
    pthread_t t1, t2;
    pthread_barrier_init(&start, NULL, 2);
    pthread_create(&t1, NULL, work, (void *)a);
    pthread_create(&t2, NULL, work, (void *)b);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    printf("%ld %ld\n", *a, *b);
    return 0;
}
