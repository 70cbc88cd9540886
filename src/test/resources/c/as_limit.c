/* A program that lowers its address space (issue 26): RLIMIT_AS to 256 MiB, read back, 1024 stores to g
   and a heap block, then a 64 MiB mmap (fits) and a 1 GiB one (ENOMEM), then 1 MiB mallocs until NULL.
   Prints each result; untraced and traced the lines are the same but for the malloc count. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
long g[1024];
int main(void) {
    struct rlimit r = {256 << 20, 256 << 20}, back;
    printf("setrlimit %d\n", setrlimit(RLIMIT_AS, &r));
    getrlimit(RLIMIT_AS, &back);
    printf("getrlimit %lu %lu\n", (unsigned long)back.rlim_cur, (unsigned long)back.rlim_max);
    long s = 0;
    for (int i = 0; i < 1024; i++) g[i] = i;
    char *p = malloc(1000);
    for (int i = 0; i < 1000; i++) p[i] = (char)i;
    for (int i = 0; i < 1000; i++) s += p[i] + g[i];
    printf("sum %ld\n", s);
    void *m = mmap(0, 64 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("mmap 64 MiB %s\n", m == MAP_FAILED ? "failed" : "ok");
    void *big = mmap(0, 1L << 30, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("mmap 1 GiB %s\n", big == MAP_FAILED && errno == ENOMEM ? "ENOMEM" : "ok");
    munmap(m, 64 << 20);
    long n = 0;
    while (n < 100000 && malloc(1 << 20)) n++;
    printf("malloc 1 MiB x %ld\n", n);
    return 0;
}
