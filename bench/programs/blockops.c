/* libc block operations: memcpy/memset over large buffers and fwrite to a file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void)
{
    size_t n = 1 << 20;
    char *a = malloc(n), *b = malloc(n);
    FILE *f = fopen("/dev/null", "w");
    for (int round = 0; round < 20; round++) {
        memset(a, round, n);
        memcpy(b, a, n);
        fwrite(b, 1, n, f);
    }
    fclose(f);
    printf("last %d\n", b[n - 1]);
    free(a);
    free(b);
    return 0;
}
