/*
 * Runtime test: argv[1] fork: the parent and a forked child each make n probed stores into their own
 * array (the child after the fork, into a fresh one); exec-ok: n stores, then exec of this program in
 * exec-fail mode with 7 stores; exec-fail: an exec that fails, then n stores and a normal exit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "mt_probe.h"

int main(int argc, char **argv)
{
    long n = atol(argv[2]);
    long *a = malloc((size_t)n * sizeof(long));
    printf("ARRAY %lx\n", (unsigned long)a);
    mt_print_sites();
    fflush(stdout);
    if (!strcmp(argv[1], "fork")) {
        for (long i = 0; i < n; i++) MT_STORE8(&a[i], i);
        pid_t p = fork();
        if (p == 0) {
            long *b = malloc((size_t)n * sizeof(long));
            printf("CHILD_ARRAY %lx\n", (unsigned long)b);
            for (long i = 0; i < n; i++) MT_STORE8(&b[i], i);
            fflush(stdout);
            exit(0);
        }
        int status;
        waitpid(p, &status, 0);
        printf("CHILD %d %d\n", p, WEXITSTATUS(status));
        return 0;
    }
    if (!strcmp(argv[1], "exec-ok")) {
        for (long i = 0; i < n; i++) MT_STORE8(&a[i], i);
        execl(argv[0], argv[0], "exec-fail", "7", (char *)NULL);
        return 9;
    }
    execl("/nonexistent/program", "program", (char *)NULL);
    for (long i = 0; i < n; i++) MT_STORE8(&a[i], i);
    return 0;
}
