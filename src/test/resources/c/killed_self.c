/* Writes a block, then ends by the signal given as its argument, with no chance to record its end (SIGKILL). */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    volatile int *a = malloc(64 * sizeof(int));
    for (int i = 0; i < 64; i++) a[i] = i;
    kill(getpid(), argc > 1 ? atoi(argv[1]) : SIGKILL);
    return a[3];
}
