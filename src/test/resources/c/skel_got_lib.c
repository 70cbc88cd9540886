/*
 * A -fPIC library whose loop reads a variable of another shared library (got_var.c) through its GOT slot in
 * every iteration (built -O1 -fno-tree-loop-im -fno-move-loop-invariants, or gcc hoists the slot's load).
 */
extern int shared_counter;

__attribute__((noinline)) void bump(int *b, int *c, int *d, int n) {
    for (int i = 0; i < n; i++) {
        b[i] += shared_counter;
        c[i] = 2 * i;
        d[i] = 3 * i;
    }
}
