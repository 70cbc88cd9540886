/* CWE-401: a list's head freed but not its nodes. Twin: every node freed. */
#include <stdlib.h>
#include "corpus.h"

struct item { struct item *next; long v; };

static void run(int bad)
{
    struct item *head = NULL;
    for (int i = 0; i < 4; i++) {
        struct item *e = malloc(sizeof *e);
        e->v = i;
        e->next = head;
        head = e;
    }
    long sum = 0;
    for (struct item *p = head; p; p = p->next) sum += p->v;
    print_int(sum);
    if (bad) { free(head); return; }
    while (head) { struct item *n = head->next; free(head); head = n; }
}

void leak_list_bad(void) { run((int)opaque(1)); }
void leak_list_good(void) { run((int)opaque(0)); }
