/* Check reports' inlined frames (CheckInlinedFramesTest): at -O2 gcc inlines these static helpers into main,
 * so the overflow, the allocation and the free lie in inlined code. Markers name the lines the test expects. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline char *make(int n)
{
    return malloc(n); /* MAKE */
}

static inline void set(char *p, int i, char v)
{
    p[i] = v; /* SET */
}

static inline void put_last(char *p, int n)
{
    set(p, n, 'x'); /* PUT_LAST */
}

static inline void drop(char *p)
{
    free(p); /* DROP */
}

int main(int argc, char **argv)
{
    int n = argc > 2 ? atoi(argv[2]) : 16;
    const char *what = argc > 1 ? argv[1] : "good";
    char *p = make(n); /* MAIN_MAKE */
    memset(p, 'a', n);
    if (strcmp(what, "overflow") == 0) {
        put_last(p, n); /* MAIN_PUT */
    } else if (strcmp(what, "uaf") == 0) {
        drop(p); /* MAIN_DROP */
        printf("%d\n", p[n / 2]); /* MAIN_UAF */
        return 0;
    } else {
        put_last(p, n - 1);
    }
    printf("%d\n", p[n - 1]);
    free(p);
    return 0;
}
