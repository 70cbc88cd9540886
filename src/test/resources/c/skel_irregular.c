/* Irregular kernels for the skeleton's size test (SkeletonSizeTest): a shuffled linked cycle walked a few
 * times (chase), an open-addressing hash table filled and probed (hash), and an insertion sort then libc's
 * qsort with a comparison function (qsort). Most of their addresses depend on loads, so a skeleton build
 * logs them as a full build does; the few loops it can compute (the fills) must not make its trace larger.
 * Prints a checksum so that the two builds can be seen to compute the same thing. */
#include <stdio.h>
#include <stdlib.h>

#define N 2048
#define SLOTS 4096

struct node { struct node *next; long value; };

static unsigned next_random(unsigned *x) { return *x = *x * 1103515245u + 12345u; }

static long chase(unsigned *x) {
    struct node *nodes = malloc(N * sizeof *nodes);
    unsigned *order = malloc(N * sizeof *order);
    for (unsigned i = 0; i < N; i++) order[i] = i;
    for (unsigned i = N - 1; i > 0; i--) {
        unsigned j = (next_random(x) >> 8) % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (unsigned i = 0; i < N; i++) {
        nodes[order[i]].next = &nodes[order[(i + 1) % N]];
        nodes[order[i]].value = i;
    }
    long total = 0;
    struct node *p = &nodes[order[0]];
    for (int round = 0; round < 4; round++)
        for (long i = 0; i < N; i++) {
            total += p->value;
            p = p->next;
        }
    free(order);
    free(nodes);
    return total;
}

static long hash(unsigned *x) {
    unsigned long *keys = calloc(SLOTS, sizeof *keys);
    unsigned again = *x; /* every other lookup repeats an inserted key */
    long found = 0;
    for (int i = 0; i < SLOTS / 2; i++) {
        unsigned long k = next_random(x) | 1;
        unsigned h = (unsigned) (k * 0x9E3779B97F4A7C15ul >> 52);
        while (keys[h] != 0 && keys[h] != k) h = (h + 1) % SLOTS;
        keys[h] = k;
    }
    for (int i = 0; i < SLOTS; i++) {
        unsigned long k = next_random(i % 2 ? x : &again) | 1;
        unsigned h = (unsigned) (k * 0x9E3779B97F4A7C15ul >> 52);
        while (keys[h] != 0 && keys[h] != k) h = (h + 1) % SLOTS;
        found += keys[h] == k;
    }
    free(keys);
    return found;
}

static int compare(const void *a, const void *b) {
    int x = *(const int *) a, y = *(const int *) b;
    return (x > y) - (x < y);
}

static long sorts(unsigned *x) {
    int *a = malloc(N * sizeof *a);
    for (int i = 0; i < N; i++) a[i] = (int) (next_random(x) >> 4);
    for (int i = 1; i < N / 4; i++) { /* insertion sort of the first quarter */
        int v = a[i], j = i - 1;
        while (j >= 0 && a[j] > v) {
            a[j + 1] = a[j];
            j--;
        }
        a[j + 1] = v;
    }
    qsort(a, N, sizeof *a, compare);
    long sum = 0;
    for (int i = 0; i < N; i += 7) sum += a[i];
    free(a);
    return sum;
}

int main(void) {
    unsigned x = 12345;
    long c = chase(&x), h = hash(&x), s = sorts(&x);
    printf("%ld %ld %ld\n", c, h, s);
    return 0;
}
