/* Loads, stores and read-modify-writes on globals and on the heap, for the comparison with Lackey. */
#include <stdio.h>
#include <stdlib.h>

int table[256];
long sum;
struct node { struct node *next; int value; };

__attribute__((noinline)) void fill(int *a, int n) { for (int i = 0; i < n; i++) a[i] = i * 3; }
__attribute__((noinline)) void bump(int *a, int n) { for (int i = 0; i < n; i++) a[i] += 1; }
__attribute__((noinline)) long total(const int *a, int n) { long s = 0; for (int i = 0; i < n; i++) s += a[i]; return s; }

__attribute__((noinline)) struct node *build(int n) {
    struct node *head = NULL;
    for (int i = 0; i < n; i++) {
        struct node *e = malloc(sizeof *e);
        e->value = i;
        e->next = head;
        head = e;
    }
    return head;
}

__attribute__((noinline)) long walk(struct node *n) { long s = 0; for (; n; n = n->next) s += n->value; return s; }

int main(void) {
    int *h = malloc(100 * sizeof(int));
    fill(table, 256);
    fill(h, 100);
    bump(table, 256);
    bump(h, 100);
    struct node *list = build(50);
    sum = total(table, 256) + total(h, 100) + walk(list);
    printf("%ld\n", sum);
    free(h);
    return 0;
}
