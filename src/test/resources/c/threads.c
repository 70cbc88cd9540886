/* Four threads, each storing into its own slice of a global array. */
#include <pthread.h>

#define THREADS 4
#define PER 50
int slots[THREADS * PER];

static void *work(void *arg) {
    int id = (int)(long)arg;
    for (int i = 0; i < PER; i++) slots[id * PER + i] = id;
    return 0;
}

int main(void) {
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++) pthread_create(&t[i], 0, work, (void *)i);
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], 0);
    return 0;
}
