/* Globals, a static, a use after free, stdout and a library function's accesses, for the symbolic trace. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int table[20];
static long counter;
char message[] = "hello, symbols";

__attribute__((noinline)) static void tick(void) { counter++; }

int main(void) {
    table[10] = 5;
    tick();
    int *block = malloc(16 * sizeof(int));
    block[3] = 1;
    free(block);
    volatile int stale = block[3];
    (void)stale;
    fputs("to stdout\n", stdout);
    return (int)strlen(message) - 14;
}
