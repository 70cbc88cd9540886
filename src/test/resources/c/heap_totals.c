/*
 * heap_totals.c: allocations whose heap totals are known exactly (HeapTotalsRunTest). No stdio: its buffer
 * would be one more block in fault mode and none compiled in (glibc's own mallocs are not wrapped there).
 *
 *   malloc 100, 200, 300; free the 200; one read of the freed block (use after free);
 *   realloc the 100 to 400; ten malloc(16)/free pairs (temporary); the 400 and the 300 never freed.
 *
 * Totals: 14 blocks, 1,160 bytes; peak 716 bytes in 3 blocks at the first malloc(16); live at exit 700
 * bytes in 2 blocks; temporary 10 blocks, 160 bytes; 1 access to freed memory.
 */
#include <stdlib.h>

char *volatile sink;

int main(void)
{
    char *a = malloc(100);
    char *b = malloc(200);
    char *c = malloc(300);
    a[0] = 1;
    b[0] = 2;
    c[0] = 3;
    free(b);
    char after = *(volatile char *)b; /* use after free: one load */
    a = realloc(a, 400);
    for (int i = 0; i < 10; i++) {
        char *t = malloc(16);
        t[0] = (char)i;
        free(t);
    }
    sink = a;
    sink = c;
    return after == 2 ? 0 : 0;
}
