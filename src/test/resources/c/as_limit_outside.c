/* RLIMIT_AS lowered from outside (issue 26): a forked child sets its parent's address space limit to
   256 MiB (prlimit), which the agent in the parent cannot keep apart; then the parent stores into g, an
   mmap'd MiB and a heap block. Prints "limit set by the child: 1" and the sum of g. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
long g[4096];
int main(void) {
    pid_t parent = getpid(), c = fork();
    if (c == 0) {
        struct rlimit r = {256 << 20, 256 << 20};
        _exit(prlimit(parent, RLIMIT_AS, &r, NULL) != 0);
    }
    int st;
    waitpid(c, &st, 0);
    printf("limit set by the child: %d\n", WEXITSTATUS(st) == 0);
    fflush(stdout);
    long s = 0;
    for (int i = 0; i < 4096; i++) g[i] = i;
    char *m = mmap(0, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m != MAP_FAILED) for (int i = 0; i < (1 << 20); i += 4096) m[i] = 1;
    char *p = malloc(100000);
    if (p) for (int i = 0; i < 100000; i += 64) p[i] = 2;
    for (int i = 0; i < 4096; i++) s += g[i];
    printf("sum %ld\n", s);
    return 0;
}
