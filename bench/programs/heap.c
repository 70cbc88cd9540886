/* Heap-heavy: builds, walks and frees linked lists of small malloc'd nodes. */
#include <stdio.h>
#include <stdlib.h>
struct node { struct node *next; long value; };
int main(void)
{
    long total = 0;
    for (int round = 0; round < 20; round++) {
        struct node *head = NULL;
        for (int i = 0; i < 1000; i++) {
            struct node *n = malloc(sizeof *n);
            n->value = i + round;
            n->next = head;
            head = n;
        }
        for (struct node *n = head; n; n = n->next) total += n->value;
        while (head) {
            struct node *n = head->next;
            free(head);
            head = n;
        }
    }
    printf("total %ld\n", total);
    return 0;
}
