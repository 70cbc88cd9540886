/* A search by break, as a SAT solver's watch loop runs it (picosat's propl; SkeletonSearchTest): each clause's
 * literals after the first are moved up one place until a literal that is not false, which ends the search.
 * The loop's own exit compares two pointers, but the side exit reads a literal's value through a loaded
 * pointer, so a run lasts as long as the data say: here one or two iterations. A skeleton run of it would
 * log its start and where it left (a marker on the side exit), two pointers into clauses visited in no order,
 * to compute two accesses an iteration, which full mode's strided records pack better (the skeleton trace
 * was 368,192 bytes against full mode's 312,984; 345,056 once declined): --skeleton declines it (reason 15)
 * and gives it full mode's probes. */
#include <stdio.h>

#define VARS 512
#define CLAUSES 4096
#define WIDTH 6

struct lit { signed char val; };
static struct lit lits[VARS];
static struct lit *clause[CLAUSES][WIDTH];

/* The first literal of c[1..size) that is not false, the others moved up one place (-1: all false). */
__attribute__((noinline)) long watch(struct lit **c, long size)
{
    struct lit **l = c + 1, **eol = c + size, *prev = c[0];
    while (++l != eol) {
        struct lit *next = *l;
        *l = prev;
        prev = next;
        if (next->val != 0) break;
    }
    return l == eol ? -1 : l - c;
}

int main(void)
{
    unsigned x = 2463534242u;
    for (int i = 0; i < VARS; i++) {
        x ^= x << 13; x ^= x >> 17; x ^= x << 5;
        lits[i].val = x % 3 == 0 ? 0 : 1; /* a third false */
    }
    for (int i = 0; i < CLAUSES; i++)
        for (int k = 0; k < WIDTH; k++) {
            x ^= x << 13; x ^= x >> 17; x ^= x << 5;
            clause[i][k] = &lits[x % VARS];
        }
    /* visited in a shuffled order, as a solver's watch lists reach clauses scattered over its heap */
    static int order[CLAUSES];
    for (int i = 0; i < CLAUSES; i++) order[i] = i;
    for (int i = CLAUSES - 1; i > 0; i--) {
        x ^= x << 13; x ^= x >> 17; x ^= x << 5;
        int j = x % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    long found = 0;
    for (int r = 0; r < 8; r++)
        for (int i = 0; i < CLAUSES; i++) found += watch(clause[order[i]], WIDTH);
    printf("%ld\n", found);
    return 0;
}
