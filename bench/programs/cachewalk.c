/*
 * cachewalk: a memory-bound workload for the cache simulator and the exporters (bench/cachesim.sh).
 * It walks a global table sequentially, a 4 MiB heap array with a stride of one cache line, and a 64 KiB
 * heap block at pseudo-random offsets, and copies between two heap blocks with memcpy, ROUNDS times
 * (argv[1], default 100). Every walk is a plain load or store of 4 or 8 bytes, so under `memtrace run`
 * each loop iteration is one traced access; the memcpy calls are one block event each.
 * What it gets wrong as a benchmark: the access mix is fixed and regular, unlike a real program's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TABLE 4096
#define BIG (4u << 20)
#define SMALL (64u << 10)

int table[TABLE];

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 100;
    char *big = malloc(BIG);
    unsigned *small = malloc(SMALL);
    char *from = malloc(SMALL), *to = malloc(SMALL);
    unsigned long sum = 0, x = 12345;
    memset(big, 1, BIG);
    memset(small, 2, SMALL);
    memset(from, 3, SMALL);
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < TABLE; i++) sum += table[i];
        for (unsigned i = 0; i < BIG; i += 64) big[i] = (char) sum;
        for (int i = 0; i < 8192; i++) {
            x = x * 6364136223846793005ul + 1442695040888963407ul;
            sum += small[(x >> 33) % (SMALL / sizeof *small)];
        }
        memcpy(to, from, SMALL);
    }
    table[0] = (int) sum;
    printf("%lu\n", sum);
    free(to);
    free(from);
    free(small);
    free(big);
    return 0;
}
