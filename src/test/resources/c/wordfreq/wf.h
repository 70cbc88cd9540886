/* wordfreq: a small multi-file program (hash table, sorting in a static library, a jump table) that the
 * compiled-in tests build with plain gcc and with memtrace cc and compare under Valgrind's Lackey. */
#ifndef WF_H
#define WF_H
#include <stddef.h>

struct entry {
    struct entry *next;
    char word[16];
    int count;
};

void table_init(size_t buckets);
struct entry *table_add(const char *word);
size_t table_collect(struct entry **out, size_t max);
void table_free(void);
void sort_entries(struct entry **v, size_t n);
int classify(int c);
#endif
