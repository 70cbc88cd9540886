/*
 * A loop that leaves by a break on data it loaded through the pointer it just read (skel_break.c,
 * SkeletonTraceTest; found in picosat's propl, bench/corpus.sh): each run walks a clause's literal pointers,
 * moves each one slot down, and stops at the first literal that is not false (`lit->val != -1`), or at the
 * clause's end. Output: one line of sums, so the compiler keeps every loop.
 * Built --skeleton, its trace must print as the full build's at -O1, -Os and -O2. What it catches: at -O2 gcc
 * tests the break right after the loop body's last access, a logged load, and a replay that took that side
 * exit's marker for an iteration already passed read "N skeleton loop runs do not match their records", one
 * for each run that ends by the break (exit status 1).
 * Each literal is also copied to the clause's second row (`l[MAX]`, a computed store at the same base): with
 * picosat's two accesses an iteration such a search by break is declined (reason 15, skel_watch.c); with
 * three it pays for its records and stays a skeleton loop, whose replay this checks.
 */
#include <stdio.h>
#include <stdlib.h>

typedef struct Lit { signed char val; } Lit;
enum { MAX = 8 };
typedef struct Cls { unsigned size; Lit *lits[MAX]; Lit *was[MAX]; } Cls;

__attribute__((noinline)) long walk(Cls **cs, int n, Lit *first)
{
    long ended = 0;
    for (int k = 0; k < n; k++) {
        Lit **l = cs[k]->lits, **eol = cs[k]->lits + cs[k]->size, *prev = first;
        while (++l != eol) {
            Lit *lit = *l;
            *l = prev;
            l[MAX] = prev;
            prev = lit;
            if (lit->val != -1) break;
        }
        ended += l == eol;
    }
    return ended;
}

int main(void)
{
    enum { N = 200 };
    static Lit lits[64];
    Cls *cs[N];
    unsigned seed = 7;
    for (int i = 0; i < 64; i++) lits[i].val = i % 3 == 0 ? 1 : -1;
    for (int k = 0; k < N; k++) {
        unsigned size = 3 + k % 6;
        cs[k] = malloc(sizeof *cs[k]);
        cs[k]->size = size;
        for (unsigned j = 0; j < size; j++) {
            seed = seed * 1103515245 + 12345;
            cs[k]->lits[j] = &lits[1 + (seed >> 16) % 63];
        }
    }
    long s = 0;
    for (int r = 0; r < 3; r++) s += walk(cs, N, &lits[0]);
    printf("%ld\n", s);
    return 0;
}
