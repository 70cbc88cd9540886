/* CWE-476: a lookup that returns NULL for an unknown key, its result's field read unchecked. */
#include <stddef.h>
#include <string.h>
#include "corpus.h"

struct entry { const char *key; long value; };
static struct entry entries[] = {{"one", 1}, {"two", 2}};

static struct entry *lookup(const char *key)
{
    for (size_t i = 0; i < 2; i++) if (strcmp(entries[i].key, key) == 0) return &entries[i];
    return NULL;
}

static void show(const char *key)
{
    struct entry *e = lookup(key);
    print_int(e->value); /* BAD */
}

void null_struct_field_bad(void) { show(opaque_ptr("three")); }
void null_struct_field_good(void) { show(opaque_ptr("two")); }
