/* uaf_late.c: a use after free in a helper's 7th execution (main -> inspect -> peek), for AccessStackTest's
 * `memtrace cc` case (docs/stacks.md, "Access stacks"): a probe sends its callers for its first 4 executions
 * only, so the load in peek (line 9) that reads the freed block has none; main's loop over a live block runs
 * the probe's armed executions and the one after its byte is written back. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noipa)) static int peek(const int *p) {
    return p[1];
}

__attribute__((noipa)) static int inspect(const int *p) {
    return peek(p) + 1;
}

int main(void) {
    int *live = malloc(4 * sizeof *live);
    live[1] = 1;
    int s = 0;
    for (int i = 0; i < 6; i++) s += inspect(live);
    int *p = malloc(4 * sizeof *p);
    p[1] = 42;
    free(p);
    s += inspect(p);
    printf("%d\n", s);
    free(live);
    return 0;
}
