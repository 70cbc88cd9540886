/* RewriteFixedLayoutTest: libc's malloc, memset, strlen and free at work on one block, under a layout without
 * randomization (libraries just below the stack) and a randomized one: the same accesses by instruction. */
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    size_t n = 4096 + (size_t)argc - 1; /* not a constant: memset and strlen stay calls into libc */
    char *p = malloc(n + 1);
    if (!p) return 2;
    memset(p, 'a', n);
    p[n] = 0;
    size_t len = strlen(p);
    free(p);
    (void)argv;
    return len == n ? 0 : 1;
}
