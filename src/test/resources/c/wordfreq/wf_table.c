#include <stdlib.h>
#include "wf.h"

static struct entry **buckets;
static size_t nbuckets;

static unsigned hash(const char *s) {
    unsigned h = 5381;
    while (*s) h = h * 33 + (unsigned char) *s++;
    return h;
}

static int same(const char *a, const char *b) {
    while (*a && *a == *b) a++, b++;
    return *a == *b;
}

void table_init(size_t n) {
    nbuckets = n;
    buckets = calloc(n, sizeof *buckets);
}

struct entry *table_add(const char *word) {
    struct entry **slot = &buckets[hash(word) % nbuckets];
    for (struct entry *e = *slot; e; e = e->next)
        if (same(e->word, word)) {
            e->count++;
            return e;
        }
    struct entry *e = malloc(sizeof *e);
    int i = 0;
    for (; word[i] && i < 15; i++) e->word[i] = word[i];
    e->word[i] = 0;
    e->count = 1;
    e->next = *slot;
    *slot = e;
    return e;
}

size_t table_collect(struct entry **out, size_t max) {
    size_t n = 0;
    for (size_t b = 0; b < nbuckets; b++)
        for (struct entry *e = buckets[b]; e && n < max; e = e->next) out[n++] = e;
    return n;
}

void table_free(void) {
    for (size_t b = 0; b < nbuckets; b++) {
        struct entry *e = buckets[b];
        while (e) {
            struct entry *next = e->next;
            free(e);
            e = next;
        }
    }
    free(buckets);
}

int classify(int c) {
    switch (c) {
    case 'k': case 'l': return 0;
    case 'm': case 'n': return 1;
    case 'r': case 's': return 2;
    case 't': return 3;
    case 'v': return 3;
    default: return 0;
    }
}
