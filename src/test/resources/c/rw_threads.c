/* Four threads each sum a shared table into their own slot; main prints the sums. */
#include <pthread.h>
#include <stdio.h>

static int table[1000];
static long sums[4];

static void *work(void *arg) {
    long k = (long) arg, s = 0;
    for (int i = 0; i < 1000; i++) s += table[i] * (k + 1);
    sums[k] = s;
    return NULL;
}

int main(void) {
    pthread_t t[4];
    for (int i = 0; i < 1000; i++) table[i] = i;
    for (long k = 0; k < 4; k++) pthread_create(&t[k], NULL, work, (void *) k);
    for (int k = 0; k < 4; k++) pthread_join(t[k], NULL);
    printf("%ld %ld %ld %ld\n", sums[0], sums[1], sums[2], sums[3]);
    return 0;
}
