/* Fake frames (agent/check/check_fakestack.c): how long a use after return stays caught, and which frames are
 * handed out. `fakeframes late N` keeps a pointer to a local of keep_local, makes N calls of a function of
 * the same frame class (other_local), then reads through the pointer: a use after return while the frame has
 * not come round again. `fakeframes deep N` keeps the pointer at the deepest of N nested calls of keep_deep
 * (more than a class's window), returns from all of them and reads it. `fakeframes frames N` prints how many
 * distinct frames N calls of other_local got and whether the frame keep_local returned was among the
 * first (window - 1) of them. Each with "good" reads a live local instead. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int *volatile kept;
static volatile int sink;

/* 8 ints whose address escapes: a frame of 128 bytes (class 1, a window of 256 frames) */
__attribute__((noinline)) static void keep_local(int v)
{
    int local[8]; /* KEEP */
    for (int i = 0; i < 8; i++) local[i] = v + i;
    kept = local;
    sink = local[v & 7];
}

static int *volatile seen;
__attribute__((noinline)) static void other_local(int v)
{
    int local[8]; /* OTHER */
    for (int i = 0; i < 8; i++) local[i] = v - i;
    seen = local;
    sink = local[v & 7];
}

__attribute__((noinline)) static int keep_deep(int depth, int at)
{
    int local[8]; /* DEEP_LOCAL */
    for (int i = 0; i < 8; i++) local[i] = depth + i;
    if (depth == at) kept = local;
    int r = depth > 0 ? keep_deep(depth - 1, at) : 0;
    seen = local;
    return r + local[depth & 7];
}

int main(int argc, char **argv)
{
    if (argc != 4) { fprintf(stderr, "usage: fakeframes late|deep|frames N bad|good\n"); return 2; }
    int n = atoi(argv[2]), bad = strcmp(argv[3], "bad") == 0;
    static int live[8];
    if (strcmp(argv[1], "late") == 0) {
        keep_local(n);
        for (int i = 0; i < n; i++) other_local(i);
        if (!bad) kept = live;
        sink = kept[2]; /* LATE */
    } else if (strcmp(argv[1], "deep") == 0) {
        sink = keep_deep(n, 1);
        if (!bad) kept = live;
        sink = kept[3]; /* DEEP */
    } else if (strcmp(argv[1], "frames") == 0) {
        keep_local(1);
        int *returned = kept, reused = 0, distinct = 0;
        static int *frames[4096];
        for (int i = 0; i < n; i++) {
            other_local(i);
            int *f = seen, known = 0;
            if (i < 255 && f == returned) reused = 1;
            for (int k = 0; k < distinct && !known; k++) known = frames[k] == f;
            if (!known && distinct < 4096) frames[distinct++] = f;
        }
        printf("%d frames, returned frame %s\n", distinct, reused ? "reused early" : "kept");
    }
    printf("done\n");
    return 0;
}
