/* The allocator's odd corners, each checked by the program itself:
 *  - a realloc chain growing one block from 8 bytes to 1 MiB by doubling (small classes, then page runs)
 *    and back down to 8, every step keeping the contents (a byte at every 512th offset);
 *  - posix_memalign, aligned_alloc, memalign, valloc and pvalloc at alignments 16 to 1 MiB;
 *  - fork: the child resizes and frees a block of the parent's and allocates anew, the parent's copy
 *    stays as it was.
 * Prints "chain N steps ok" (or the first bad step), one "align A 0xADDR" line per aligned block, and
 * "fork child 0 parent ok". */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int check(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i += 512)
        if (p[i] != (unsigned char)(i / 512 + 1)) return 0;
    return 1;
}

static void mark(unsigned char *p, size_t from, size_t n)
{
    for (size_t i = (from + 511) / 512 * 512; i < n; i += 512) p[i] = (unsigned char)(i / 512 + 1);
}

int main(void)
{
    unsigned char *p = malloc(8);
    mark(p, 0, 8);
    int steps = 0, bad = -1;
    size_t n = 8;
    for (; n < (1 << 20); steps++) {
        p = realloc(p, n * 2);
        if (!check(p, n) && bad < 0) bad = steps;
        mark(p, n, n * 2);
        n *= 2;
    }
    for (; n > 8; steps++) {
        p = realloc(p, n / 2);
        n /= 2;
        if (!check(p, n) && bad < 0) bad = steps;
    }
    free(p);
    if (bad < 0) printf("chain %d steps ok\n", steps);
    else printf("chain step %d lost its contents\n", bad);

    for (size_t a = 16; a <= (1 << 20); a *= 4) {
        void *q[5] = {0};
        if (posix_memalign(&q[0], a, 100)) q[0] = NULL;
        q[1] = aligned_alloc(a, a);
        q[2] = memalign(a, 3 * a / 2);
        for (int i = 0; i < 3; i++) {
            printf("align %zu %p%s\n", a, q[i], (uintptr_t)q[i] % a ? " misaligned" : "");
            free(q[i]);
        }
    }
    void *v = valloc(5000), *pv = pvalloc(5000);
    printf("page %s %zu\n", (uintptr_t)v % 4096 || (uintptr_t)pv % 4096 ? "misaligned" : "aligned",
           malloc_usable_size(pv) >= 8192 ? (size_t)8192 : malloc_usable_size(pv));
    free(v);
    free(pv);

    char *shared = malloc(100000);
    memset(shared, 'p', 100000);
    pid_t c = fork();
    if (c == 0) {
        char *grown = realloc(shared, 300000);
        int ok = grown[99999] == 'p';
        memset(grown, 'c', 300000);
        free(grown);
        char *fresh = calloc(1000, 10);
        ok = ok && fresh[9999] == 0;
        free(fresh);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    waitpid(c, &status, 0);
    int same = 1;
    for (int i = 0; i < 100000; i++) same &= shared[i] == 'p';
    printf("fork child %d parent %s\n", WIFEXITED(status) ? WEXITSTATUS(status) : 99, same ? "ok" : "changed");
    free(shared);
    return 0;
}
