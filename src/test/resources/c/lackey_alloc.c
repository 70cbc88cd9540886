/* Allocator-heavy code for the Lackey agreement tests (issue 26, "one access too many"): malloc, calloc,
   realloc (growing and shrinking), strdup, memset/memcpy of constant size (inlined at -O0), a struct
   returned by value and copied into the heap, mmap and mremap, posix_memalign and aligned_alloc, a list
   built and walked, and a read after free whose value decides nothing (it is glibc's tcache link, which
   differs from run to run). Prints one sum, the same in every build. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct node { long key; struct node *next; char name[24]; };
struct pair { long a, b; };

__attribute__((noinline)) static struct pair make(long x)
{
    struct pair p = {x, x * 2};
    return p;
}

__attribute__((noinline)) static struct node *build(int n)
{
    struct node *head = NULL;
    for (int i = 0; i < n; i++) {
        struct node *e = malloc(sizeof *e);
        e->key = i * 3;
        e->next = head;
        snprintf(e->name, sizeof e->name, "n%d", i);
        head = e;
    }
    return head;
}

int main(int argc, char **argv)
{
    long sum = argc;
    struct node *head = build(20);
    long *zeros = calloc(32, sizeof *zeros);
    for (int i = 0; i < 32; i++) sum += zeros[i];
    int *grow = NULL;
    for (int cap = 4; cap <= 64; cap *= 2) {
        grow = realloc(grow, cap * sizeof *grow);
        for (int i = cap / 2; i < cap; i++) grow[i] = i;
    }
    grow = realloc(grow, 8 * sizeof *grow);
    sum += grow[5];
    char *s = strdup(argv[0]);
    sum += s[0] != 0;
    int a[10];
    memset(a, 0, sizeof a);
    a[3] = 7;
    int *b = malloc(sizeof a);
    memcpy(b, a, sizeof a);
    sum += b[3];
    struct pair p = make(sum);
    struct pair *hp = malloc(sizeof *hp);
    *hp = p;
    sum += hp->b;
    uint8_t *map = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) return 1;
    for (int i = 0; i < 8192; i += 512) map[i] = (uint8_t)i;
    map = mremap(map, 8192, 16384, MREMAP_MAYMOVE);
    if (map == MAP_FAILED) return 1;
    for (int i = 8192; i < 16384; i += 512) map[i] = (uint8_t)(i >> 4);
    for (int i = 0; i < 16384; i += 1024) sum += map[i];
    void *aligned = NULL;
    if (posix_memalign(&aligned, 64, 256) == 0) {
        double *d = aligned;
        for (int i = 0; i < 32; i++) d[i] = i * 0.5;
        sum += (long)d[7];
    }
    long *al2 = aligned_alloc(32, 64);
    al2[1] = 9;
    sum += al2[1];
    for (struct node *n = head; n; n = n->next) sum += n->key + n->name[1];
    struct node *dead = head;
    head = head->next;
    free(dead);
    volatile long after = dead->key; /* read after free */
    (void)after;
    while (head) {
        struct node *n = head->next;
        free(head);
        head = n;
    }
    free(zeros);
    free(grow);
    free(s);
    free(b);
    free(hp);
    free(aligned);
    free(al2);
    munmap(map, 16384);
    printf("%ld\n", sum);
    return 0;
}
