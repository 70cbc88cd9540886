/* CWE-416: freeing a list's nodes while walking it with n = n->next after free(n). */
#include <stdlib.h>
#include "rc.h"
struct node { int v; struct node *next; };
static void run(int bad)
{
    struct node *head = NULL;
    for (int i = 0; i < 5; i++) {
        struct node *n = malloc(sizeof *n);
        n->v = i;
        n->next = head;
        head = n;
    }
    long sum = 0;
    for (struct node *n = head, *next; n; n = next) {
        sum += n->v;
        if (bad) { free(n); next = n->next; } /* BAD */
        else { next = n->next; free(n); }
    }
    rc_int(sum);
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
