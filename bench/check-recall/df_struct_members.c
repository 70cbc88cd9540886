/* CWE-415: two struct members that alias one block, both freed by the destructor function. */
#include <stdlib.h>
#include "rc.h"
struct pair { char *key, *value; };
static void destroy(struct pair *p) { free(p->key); if (p->value != p->key) free(p->value); }
static void destroy_bad(struct pair *p) { free(p->key); free(p->value); /* BAD when they alias */ }
static void run(int bad)
{
    struct pair p;
    p.key = malloc(rc_n(8));
    p.value = p.key;   /* "no value": the key doubles as value */
    p.key[0] = 0;
    (bad ? destroy_bad : destroy)(&p);
    rc_int(0);
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
