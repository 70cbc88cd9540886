/* RewriteFixedLayoutTest: libc's malloc, memset, strlen and free at work on one block, and the program's own
 * loops over a global array (1,000 stores, then 1,000 loads), under a layout without randomization (libraries
 * just below the stack) and a randomized one: the same accesses by instruction, the same number in all. */
#include <stdlib.h>
#include <string.h>

int cells[1000];

int main(int argc, char **argv)
{
    size_t n = 4096 + (size_t)argc - 1; /* not a constant: memset and strlen stay calls into libc */
    char *p = malloc(n + 1);
    if (!p) return 2;
    memset(p, 'a', n);
    p[n] = 0;
    size_t len = strlen(p);
    free(p);
    for (int i = 0; i < 1000; i++) cells[i] = i * argc;
    long sum = 0;
    for (int i = 0; i < 1000; i++) sum += cells[i];
    (void)argv;
    return len == n && sum == 499500L * argc ? 0 : 1;
}
