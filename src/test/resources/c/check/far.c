/* far.c: an index gigabytes past a block or a local (Juliet's CWE129_rand shape: buffer[rand()] with only a
 * lower bound checked). Natively, and under ASan, the access lands in unmapped memory and faults; under
 * --check it landed in the checker's own read-write reservations (the heap arena, the fake stack frames),
 * whose unused parts have shadow 0, and the store went through silently.
 * `./far heap|stack bad` makes the far access; `good` the same code with an index in bounds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sink;

__attribute__((noinline)) static size_t opaque(size_t v) { __asm__ volatile("" : "+r"(v)); return v; }

__attribute__((noinline)) static void heap(size_t k)
{
    int *a = malloc(opaque(10) * sizeof *a);                /* ALLOC_HEAP */
    for (int i = 0; i < 10; i++) a[i] = i;
    a[k] = 7; /* BAD_HEAP */
    sink = a[3];
    free(a);
}

__attribute__((noinline)) static void stack(size_t k)
{
    int buf[10];
    for (int i = 0; i < 10; i++) buf[i] = i;
    buf[k] = 7; /* BAD_STACK */
    sink = buf[opaque(3)];
}

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    size_t k = opaque(strcmp(argv[2], "bad") == 0 ? (size_t)1 << 30 : 4);   /* 4 GB of ints past, or 4 */
    if (strcmp(argv[1], "heap") == 0) heap(k);
    else if (strcmp(argv[1], "stack") == 0) stack(k);
    else return 2;
    printf("done\n");
    return 0;
}
