/* Two threads allocate 100,000 small blocks each (in their own malloc arenas), write and read each one,
 * then the program counts its mappings. Under memtrace every traced piece of heap is moved onto a memfd
 * (two mappings each): moving an arena's heap block by block would leave thousands of mappings, and a
 * bigger program would run out of them (vm.max_map_count). Prints the sums and the number of mappings. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define N 100000

static void *work(void *arg) {
    long sum = 0;
    for (int i = 0; i < N; i++) {
        int *p = malloc(64);
        p[0] = i;
        sum += p[0];
    }
    return (void *)sum;
}

int main(void) {
    pthread_t t[2];
    void *sum[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, work, 0);
    for (int i = 0; i < 2; i++) pthread_join(t[i], &sum[i]);
    FILE *maps = fopen("/proc/self/maps", "r");
    int lines = 0;
    for (int c; (c = fgetc(maps)) != EOF;) lines += c == '\n';
    printf("sums %ld %ld mappings %s\n", (long)sum[0], (long)sum[1], lines < 200 ? "under 200" : "200 or more");
    return 0;
}
