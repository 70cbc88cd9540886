/* Pointer chasing: a singly linked cycle through 256 k nodes in a shuffled order, walked 40 times. Every
 * address depends on the previous load: nothing a skeleton can compute. */
#include <stdio.h>
#include <stdlib.h>
#define N (1 << 18)
struct node { struct node *next; long value; };
int main(void)
{
    struct node *nodes = malloc(N * sizeof *nodes);
    unsigned *order = malloc(N * sizeof *order);
    unsigned x = 12345;
    for (unsigned i = 0; i < N; i++) order[i] = i;
    for (unsigned i = N - 1; i > 0; i--) {
        x = x * 1103515245u + 12345u;
        unsigned j = (x >> 8) % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (unsigned i = 0; i < N; i++) {
        nodes[order[i]].next = &nodes[order[(i + 1) % N]];
        nodes[order[i]].value = i;
    }
    long total = 0;
    struct node *p = &nodes[order[0]];
    for (int round = 0; round < 40; round++)
        for (long i = 0; i < N; i++) {
            total += p->value;
            p = p->next;
        }
    printf("total %ld\n", total);
    free(order);
    free(nodes);
    return 0;
}
