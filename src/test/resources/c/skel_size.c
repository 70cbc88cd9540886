/* Irregular kernels for SkeletonSizeTest, one per run (argv[1]: chase, hash or sort), each with a stretch
 * a skeleton build computes (a fill, a strided sum) between stretches it logs as a full build does
 * (addresses that depend on loads); each computed stretch is several chunks of a full build's records, so
 * that it saves more than zstd's few bytes of noise on the chunk around it. With small buffers
 * (MEMTRACE_BUFFER_KB) each trace takes dozens of chunks, so the chunks after the computed stretch must be
 * cut where the full build's are for the skeleton trace to stay no larger. Prints a checksum, so that the two builds can be seen to compute the same thing.
 * What it gets wrong: nothing checks that gcc keeps the fills as loops a skeleton can compute; the test
 * asserts that some accesses were computed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4096
#define SLOTS 8192

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
    long *weights = malloc(3 * N * sizeof *weights); /* under malloc's mmap threshold: a heap block at one address */
    for (long r = 0; r < 8; r++)                     /* in both builds; a computed stretch of several chunks     */
        for (long i = 0; i < 3 * N; i += 2) weights[i] = i + r;
    long total = weights[N];
    free(weights);
    struct node *p = &nodes[order[0]];
    for (int round = 0; round < 6; round++)
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
    long *weights = malloc(SLOTS * sizeof *weights);
    long found = 0;
    for (int i = 0; i < SLOTS / 2; i++) {
        unsigned long k = next_random(x) | 1;
        unsigned h = (unsigned) (k * 0x9E3779B97F4A7C15ul >> 51);
        while (keys[h] != 0 && keys[h] != k) h = (h + 1) % SLOTS;
        keys[h] = k;
    }
    for (long r = 0; r < 8; r++) /* computed: several chunks of full mode's records */
        for (long i = 0; i < SLOTS; i++) weights[i] = 3 * i + r;
    unsigned again = 12345;
    for (int i = 0; i < 2 * SLOTS; i++) {
        unsigned long k = next_random(i % 2 ? x : &again) | 1;
        unsigned h = (unsigned) (k * 0x9E3779B97F4A7C15ul >> 51);
        while (keys[h] != 0 && keys[h] != k) h = (h + 1) % SLOTS;
        found += keys[h] == k ? weights[h] : 0;
    }
    free(weights);
    free(keys);
    return found;
}

static int compare(const void *a, const void *b) {
    int x = *(const int *) a, y = *(const int *) b;
    return (x > y) - (x < y);
}

static long sort(unsigned *x) {
    int *a = malloc(N * sizeof *a);
    for (int i = 0; i < N; i++) a[i] = (int) (next_random(x) >> 4);
    for (int i = 1; i < N / 8; i++) { /* insertion sort of the first eighth */
        int v = a[i], j = i - 1;
        while (j >= 0 && a[j] > v) {
            a[j + 1] = a[j];
            j--;
        }
        a[j + 1] = v;
    }
    long *w = malloc(3 * N * sizeof *w); /* computed: several chunks of full mode's records */
    for (long r = 0; r < 4; r++)
        for (long i = 0; i < 3 * N; i++) w[i] = i + r;
    long sum = w[N];
    free(w);
    for (int i = 0; i < N; i += 3) sum += a[i];
    qsort(a, N, sizeof *a, compare);
    for (int i = 0; i < N; i += 7) sum += a[i];
    free(a);
    return sum;
}

int main(int argc, char **argv) {
    unsigned x = 12345;
    const char *k = argc > 1 ? argv[1] : "";
    long r = !strcmp(k, "chase") ? chase(&x) : !strcmp(k, "hash") ? hash(&x) : !strcmp(k, "sort") ? sort(&x) : -1;
    printf("%s %ld\n", k, r);
    return r < 0;
}
