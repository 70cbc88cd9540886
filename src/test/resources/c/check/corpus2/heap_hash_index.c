/* CWE-122: a hash table of 16 buckets indexed by hash % 17 (the size taken from the wrong constant): bucket 16
 * is read one element past the block. Twin: % 16. */
#include <stdlib.h>
#include "corpus.h"

static unsigned hash(const char *s)
{
    unsigned h = 5381;
    while (*s) h = h * 33 + (unsigned char)*s++;
    return h;
}

static void lookup(const char *key, unsigned mod)
{
    long *buckets = calloc(16, sizeof *buckets);
    unsigned b = hash(key) % mod;
    print_int(b);
    print_int(buckets[b]); /* BAD */
    free(buckets);
}

/* hash("a5") % 17 == 16, % 16 == 11 */
void heap_hash_index_bad(void) { lookup("a5", (unsigned)opaque(17)); }
void heap_hash_index_good(void) { lookup("a5", (unsigned)opaque(16)); }
