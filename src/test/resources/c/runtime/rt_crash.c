/* Runtime test: n probed stores, then the end named by argv[1]: abort, null (a store through NULL),
 * kill (SIGKILL to itself, after a pause that lets the writer catch up) or _exit (status 5). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "mt_probe.h"

int main(int argc, char **argv)
{
    long n = atol(argv[2]);
    long *a = malloc((size_t)n * sizeof(long));
    printf("ARRAY %lx\n", (unsigned long)a);
    mt_print_sites();
    fflush(stdout);
    for (long i = 0; i < n; i++) MT_STORE8(&a[i], i);
    if (!strcmp(argv[1], "abort")) abort();
    if (!strcmp(argv[1], "null")) *(volatile long *)0 = 1;
    if (!strcmp(argv[1], "kill")) {
        usleep(500 * 1000);
        kill(getpid(), SIGKILL);
    }
    if (!strcmp(argv[1], "_exit")) _exit(5);
    return 0;
}
