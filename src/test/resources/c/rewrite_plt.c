/* rewrite_plt.c: calls through the PLT for memtrace run --mode rewrite (RewritePltTest): labs three times
 * and printf once, both lazily bound when linked -z lazy (the first call of each goes through the PLT's
 * push and PLT0 into ld.so's resolver), through .plt.sec when linked with IBT PLTs. Built -fno-builtin so
 * that labs stays a call. Prints 6 for no argument. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    (void)argv;
    long s = 0;
    for (int i = 0; i < 3; i++) s += labs(-i - argc);
    printf("%ld\n", s);
    return 0;
}
