/* Allocation stacks (docs/stacks.md, "Cost"): 1 M malloc and 1 M free through a wrapper three calls below main. */
#include <stdio.h>
#include <stdlib.h>
struct node { struct node *next; long value; };
__attribute__((noinline)) static void *xmalloc(size_t n) { void *p = malloc(n); if (!p) abort(); return p; }
__attribute__((noinline)) static struct node *make(long v, struct node *next)
{
    struct node *n = xmalloc(sizeof *n);
    n->value = v;
    n->next = next;
    return n;
}
__attribute__((noinline)) static long round_trip(int round)
{
    struct node *head = NULL;
    long total = 0;
    for (int i = 0; i < 1000; i++) head = make(i + round, head);
    while (head) {
        struct node *n = head->next;
        total += head->value;
        free(head);
        head = n;
    }
    return total;
}
int main(void)
{
    long total = 0;
    for (int round = 0; round < 1000; round++) total += round_trip(round);
    printf("total %ld\n", total);
    return 0;
}
