/* elf_target.c: the file ElfReaderTest reads, truncated and corrupted: three functions, a global and a leak. */
#include <stdlib.h>

int counts[10];
static int helper(int x) { return x * 3; }
int twice(int x) { return helper(x) * 2; }
static void lose(int n)
{
    char *volatile p = malloc(n);
    p[0] = 1;
}
int main(int argc, char **argv)
{
    lose(16);
    counts[argc] = twice(argc);
    return 0;
}
