#include <stdio.h>
#include "wf.h"

static const char *syllables[] = {"ka", "lo", "mi", "ne", "su", "ra", "to", "vi"};
static struct entry *top[256];
char scratch[16];

/* the k-th generated word: two or three syllables chosen by a linear congruential sequence */
static void word(unsigned k, char *out) {
    unsigned x = k * 2654435761u;
    int n = 2 + (x >> 30) % 2, len = 0;
    for (int i = 0; i < n; i++) {
        const char *s = syllables[(x >> (3 * i)) & 7];
        out[len++] = s[0];
        out[len++] = s[1];
    }
    out[len] = 0;
}

int main(void) {
    int kinds[4] = {0, 0, 0, 0};
    table_init(64);
    for (unsigned k = 0; k < 600; k++) {
        word(k % 97, scratch);
        struct entry *e = table_add(scratch);
        kinds[classify(e->word[0])]++;
    }
    size_t n = table_collect(top, 256);
    sort_entries(top, n);
    for (size_t i = 0; i < 3 && i < n; i++) printf("%s %d\n", top[i]->word, top[i]->count);
    printf("%zu words, kinds %d %d %d %d\n", n, kinds[0], kinds[1], kinds[2], kinds[3]);
    table_free();
    return 0;
}
