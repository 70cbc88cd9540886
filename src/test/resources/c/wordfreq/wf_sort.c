#include "wf.h"

/* insertion sort by count (descending), then by word: goes into libwfsort.a */
static int before(const struct entry *a, const struct entry *b) {
    if (a->count != b->count) return a->count > b->count;
    for (int i = 0; i < 16; i++) {
        if (a->word[i] != b->word[i]) return (unsigned char) a->word[i] < (unsigned char) b->word[i];
        if (!a->word[i]) break;
    }
    return 0;
}

void sort_entries(struct entry **v, size_t n) {
    for (size_t i = 1; i < n; i++) {
        struct entry *x = v[i];
        size_t j = i;
        while (j > 0 && before(x, v[j - 1])) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}
