/* uaf_stack.c: a use after free two calls below main (main -> inspect -> peek), for the access stacks of
 * AccessStackTest (docs/stacks.md, "Access stacks"): the load in peek (line 7) reads a block main freed. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static int peek(const int *p) {
    return p[1];
}

__attribute__((noinline)) static int inspect(const int *p) {
    return peek(p) + 1;
}

int main(void) {
    int *p = malloc(4 * sizeof *p);
    p[1] = 42;
    free(p);
    int v = inspect(p);
    printf("%d\n", v > 0);
    return 0;
}
