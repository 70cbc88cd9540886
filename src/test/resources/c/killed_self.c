/* Writes a block, then ends by the signal given as its argument, with no chance to record its end (SIGKILL),
   or, given "exit", by a raw exit system call that skips every exit handler. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
    volatile int *a = malloc(64 * sizeof(int));
    for (int i = 0; i < 64; i++) a[i] = i;
    if (argc > 1 && strcmp(argv[1], "exit") == 0) syscall(SYS_exit, 0);
    kill(getpid(), argc > 1 ? atoi(argv[1]) : SIGKILL);
    return a[3];
}
