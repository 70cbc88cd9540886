/* Bug cases for `memtrace cc --check` (CheckCasesTest): `./cases NAME bad` runs the bug, `./cases NAME good`
 * its twin, which must stay silent. Sizes and indexes come from atoi() so that -O2 cannot fold the bug
 * away. Marker comments name the lines a report must cite: ALLOC (the allocating call), FREE, BAD (the
 * faulty access or call). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rec { long a, b, c, d; };

volatile long sink;
int table[10];
char *kept;
char text[] = "a string of some length";

__attribute__((noinline)) static void heap_overflow(int n, int bad)
{
    char *p = malloc(n); /* ALLOC:heap_overflow */
    p[n - 1 + bad] = 1; /* BAD:heap_overflow */
    sink = p[0];
    free(p);
}

__attribute__((noinline)) static void heap_underflow(int n, int bad)
{
    long *p = malloc(n * sizeof *p); /* ALLOC:heap_underflow */
    p[0] = 3;
    sink = p[-bad]; /* BAD:heap_underflow */
    free(p);
}

__attribute__((noinline)) static void use_after_free(int n, int bad)
{
    int *p = malloc(n * sizeof *p); /* ALLOC:use_after_free */
    p[2] = 7;
    int *q = p;
    if (bad) free(p); /* FREE:use_after_free */
    sink = q[2]; /* BAD:use_after_free */
    if (!bad) free(p);
}

__attribute__((noinline)) static void reused_after_free(int n, int bad)
{
    int *p = malloc(n * sizeof *p); /* ALLOC:reused_after_free */
    free(p); /* FREE:reused_after_free */
    void *others[64];
    for (int i = 0; i < 64; i++) others[i] = malloc(n * sizeof *p);
    int *q = bad ? p : others[5];
    sink = q[1]; /* BAD:reused_after_free */
    for (int i = 0; i < 64; i++) free(others[i]);
}

/* A million malloc/free pairs (chunks of 160 bytes: 160 MB if none were reused): the quarantine lets its oldest
 * chunks go rather than grow the arena, and the block freed 1,000 frees before the end is still caught. */
__attribute__((noinline)) static void recycled_after_free(int n, int bad)
{
    int *recent = NULL, live[16] = {0};
    for (int i = 0; i < 1000000; i++) {
        int *volatile q = malloc(n * sizeof *q); /* ALLOC:recycled_after_free */
        q[0] = i;
        if (i == 999000) recent = q;
        free(q); /* FREE:recycled_after_free */
    }
    sink = (bad ? recent : live)[1]; /* BAD:recycled_after_free */
}

__attribute__((noinline)) static void double_free(int n, int bad)
{
    char *volatile p = malloc(n); /* ALLOC:double_free */
    free(p); /* FREE:double_free */
    if (bad) free(p); /* BAD:double_free */
    sink = 0;
}

__attribute__((noinline)) static void free_stack(int n, int bad)
{
    char local[32];
    char *heap = malloc(n);
    local[n % 32] = 1;
    sink = local[1];
    free(bad ? local : heap); /* BAD:free_stack */
}

__attribute__((noinline)) static void free_global(int n, int bad)
{
    char *heap = malloc(n);
    free(bad ? (void *)table : heap); /* BAD:free_global */
    sink = 0;
}

__attribute__((noinline)) static void free_middle(int n, int bad)
{
    char *p = malloc(n); /* ALLOC:free_middle */
    free(p + 8 * bad); /* BAD:free_middle */
    if (bad) free(p);
}

__attribute__((noinline)) static void stack_overflow(int n, int bad)
{
    char buf[16];
    memset(buf, 0, sizeof buf);
    buf[n - 1 + bad] = 1; /* BAD:stack_overflow */
    sink = buf[3];
}

__attribute__((noinline)) static void global_overflow(int n, int bad)
{
    table[n - 7 + bad] = 2; /* BAD:global_overflow */
    sink = table[0];
}

__attribute__((noinline)) static void memcpy_overflow(int n, int bad)
{
    char *p = malloc(n); /* ALLOC:memcpy_overflow */
    memcpy(p, text, n + bad); /* BAD:memcpy_overflow */
    sink = p[1];
    free(p);
}

__attribute__((noinline)) static void strcpy_overflow(int n, int bad)
{
    char *p = malloc(n); /* ALLOC:strcpy_overflow */
    text[n - 1 + bad] = 0;
    strcpy(p, text); /* BAD:strcpy_overflow */
    sink = p[0];
    free(p);
}

__attribute__((noinline)) static void leak(int n, int bad)
{
    char *p = malloc(n); /* ALLOC:leak */
    p[0] = 1;
    sink = p[0];
    if (bad) p = NULL;
    kept = p;
}

__attribute__((noinline)) static void loop_overflow(int n, int bad)
{
    int *a = malloc(n * sizeof *a); /* ALLOC:loop_overflow */
    for (int i = 0; i < n + bad; i++) a[i] = i; /* BAD:loop_overflow */
    sink = a[1];
    free(a);
}

__attribute__((noinline)) static long fields(struct rec *r)
{
    return r->a + r->b + r->c + r->d; /* BAD:fields */
}

__attribute__((noinline)) static void struct_fields(int n, int bad)
{
    struct rec *r = malloc(sizeof *r - 8 * bad); /* ALLOC:struct_fields */
    memset(r, 1, sizeof *r - 8 * bad);
    sink = fields(r);
    free(r);
}

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    int bad = strcmp(argv[2], "bad") == 0, n = argc > 3 ? atoi(argv[3]) : 16;
    struct { const char *name; void (*run)(int, int); } cases[] = {
        {"heap_overflow", heap_overflow}, {"heap_underflow", heap_underflow}, {"use_after_free", use_after_free},
        {"reused_after_free", reused_after_free}, {"recycled_after_free", recycled_after_free},
        {"double_free", double_free}, {"free_stack", free_stack},
        {"free_global", free_global}, {"free_middle", free_middle}, {"stack_overflow", stack_overflow},
        {"global_overflow", global_overflow}, {"memcpy_overflow", memcpy_overflow},
        {"strcpy_overflow", strcpy_overflow}, {"leak", leak}, {"loop_overflow", loop_overflow},
        {"struct_fields", struct_fields},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (strcmp(cases[i].name, argv[1]) == 0) {
            cases[i].run(n, bad);
            printf("done\n");
            return 0;
        }
    }
    return 2;
}
