/* Four threads, each storing into its own slice of a global array. With "serial" each thread is joined
 * before the next starts, so no two threads ever run at the same time. */
#include <pthread.h>
#include <string.h>

#define THREADS 4
#define PER 50
int slots[THREADS * PER];

static void *work(void *arg) {
    int id = (int)(long)arg;
    for (int i = 0; i < PER; i++) slots[id * PER + i] = id;
    return 0;
}

int main(int argc, char **argv) {
    int serial = argc > 1 && strcmp(argv[1], "serial") == 0;
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++) {
        pthread_create(&t[i], 0, work, (void *)i);
        if (serial) pthread_join(t[i], 0);
    }
    if (!serial)
        for (int i = 0; i < THREADS; i++) pthread_join(t[i], 0);
    return 0;
}
