/* The summary's count of inline checks (CheckCountTest): two() reads a[i] and b[j], one run of two inlined checks
 * counted at once at the first; `./run_count 16` reads one past a's 16 bytes, and the check that stops the program
 * there must not count b[j]'s check, which never ran. main's read of argv[1] is the third check. */
#include <stdlib.h>

__attribute__((noinline)) int two(char *a, long i, char *b, long j)
{
    return a[i] + b[j];
}

int main(int argc, char **argv)
{
    char *a = calloc(16, 1), *b = calloc(16, 1);
    int r = two(a, atol(argv[1]), b, 3);
    free(a);
    free(b);
    return r & 1;
}
