/* CWE-415: a record's destructor frees its name; the caller, not knowing, frees the name too before freeing the
 * record. Twin: the caller leaves the name to the destructor. */
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

struct record { char *name; int id; };

static void record_free(struct record *r)
{
    free(r->name); /* BAD */
    free(r);
}

static void run(int bad)
{
    struct record *r = malloc(sizeof *r);
    r->name = malloc(16);
    strcpy(r->name, "alpha");
    r->id = 1;
    char *name = r->name;
    print_line(name);
    if (bad) free(name);
    record_free(r);
}

void double_free_cleanup_bad(void) { run((int)opaque(1)); }
void double_free_cleanup_good(void) { run((int)opaque(0)); }
