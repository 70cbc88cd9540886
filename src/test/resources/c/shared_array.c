/* Two threads store into and load from the same pages at the same time: thread t writes the elements
 * t, t+2, t+4, ... of one int array (a global; with "heap" a malloc'd block; with "mmap" an anonymous
 * mapping of the program's), waits for the other, then
 * reads its own elements back. Prints the sums, so that a wrong value from a redirected step shows. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define PER 5000
int shared[2 * PER];
static int *array;
static pthread_barrier_t start, stored;

static void *work(void *arg) {
    int t = (int)(long)arg;
    long sum = 0;
    pthread_barrier_wait(&start);
    for (int i = 0; i < PER; i++) array[2 * i + t] = i + t;
    pthread_barrier_wait(&stored);
    for (int i = 0; i < PER; i++) sum += array[2 * i + t];
    return (void *)sum;
}

int main(int argc, char **argv) {
    const char *where = argc > 1 ? argv[1] : "global";
    array = strcmp(where, "heap") == 0 ? malloc(sizeof shared)
            : strcmp(where, "mmap") == 0 ? mmap(0, sizeof shared, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
            : shared;
    pthread_barrier_init(&start, 0, 2);
    pthread_barrier_init(&stored, 0, 2);
    pthread_t th[2];
    for (long t = 0; t < 2; t++) pthread_create(&th[t], 0, work, (void *)t);
    for (int t = 0; t < 2; t++) {
        void *sum;
        pthread_join(th[t], &sum);
        printf("thread %d sum %ld\n", t, (long)sum);
    }
    printf("array %p\n", (void *)array);
    return 0;
}
