/* CWE-416: two owners of one struct; one frees it, the other writes a field through its alias. */
#include <stdlib.h>
#include "corpus.h"

typedef struct { long id; long balance; } account;
typedef struct { account *acct; } holder;

static void release(holder *h) { free(h->acct); h->acct = NULL; }

static void run(int bad)
{
    account *a = malloc(sizeof *a);
    a->id = 7;
    a->balance = 100;
    holder first = {a}, second = {a};
    if (bad) release(&first);
    second.acct->balance += 50; /* BAD */
    print_int(second.acct->balance);
    if (!bad) release(&first);
}

void uaf_alias_write_bad(void) { run((int)opaque(1)); }
void uaf_alias_write_good(void) { run((int)opaque(0)); }
