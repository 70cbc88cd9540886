/* Lines on standard output and standard error, the latter written in two halves with a pause between: RunProgressTest. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(void) {
    volatile long sum = 0;
    for (int k = 0; k < 3; k++) {
        long *a = malloc(4096 * sizeof *a);
        for (int i = 0; i < 4096; i++) a[i] = i, sum += a[i];
        printf("line %d\n", k); fflush(stdout);
        fprintf(stderr, "err half "); usleep(700000); fprintf(stderr, "done %d\n", k);
        free(a);
    }
    return 0;
}
