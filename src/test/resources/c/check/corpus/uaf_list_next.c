/* CWE-416: freeing a linked list reads each node's next after freeing it. Twin: reads it first. */
#include <stdlib.h>
#include "corpus.h"

struct node { struct node *next; int value; };

static struct node *build(int n)
{
    struct node *head = NULL;
    for (int i = 0; i < n; i++) {
        struct node *e = malloc(sizeof *e);
        e->value = i;
        e->next = head;
        head = e;
    }
    return head;
}

void uaf_list_next_bad(void)
{
    struct node *head = build((int)opaque(5));
    long sum = 0;
    for (struct node *p = head; p; p = p->next) { /* BAD */
        sum += p->value;
        free(p);
    }
    print_int(sum);
}

void uaf_list_next_good(void)
{
    struct node *head = build((int)opaque(5));
    long sum = 0;
    for (struct node *p = head, *next; p; p = next) {
        next = p->next;
        sum += p->value;
        free(p);
    }
    print_int(sum);
}
