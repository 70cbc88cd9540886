/* run --check's rewrite mode (the default): a global array overflowed into the alignment padding before the next
 * one (docs/check.md, "Globals in rewrite mode"), by a loop, by memset and by strcpy, and an inlined memcpy
 * (gcc -O0 expands a constant-size memcpy into moves, which no wrapper sees) running over its frame's return
 * address ("Stack smashes in rewrite mode"); strcpy past a global that the next one follows with no padding
 * (checked by the object its pointer is in), and .data's first global read at -1 (the padding after crtstuff's
 * __dso_handle). Each case does it when its second argument is "bad"; "good" does the same work within bounds
 * (smash has no twin). Usage: run_rewrite_extra loop|memset|strcpy|adjacent|under|smash|all bad|good */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int counts[10];                 /* COUNTS: 40 bytes; the next array starts 32-aligned, 24 bytes of padding */
int totals[10];                 /* TOTALS */
struct config { int flags; char name[20]; } current; /* CURRENT: 24 bytes */
char names[20];                 /* NAMES */
long level_table[8] = {10, 20, 30, 40, 50, 60, 70, 80}; /* LEVELS: .data's first object */
static char label[16];          /* LABEL: 16 bytes, 16-aligned: whatever follows it starts right at its end */

static volatile size_t sink;

static void loop(size_t last)
{
    for (size_t i = 0; i <= last; i++) counts[i] = (int)i; /* LOOP */
    for (size_t i = 0; i < 10; i++) totals[i] = counts[i] * 2;
    printf("loop %d %d\n", counts[9], totals[9]);
}

static void clear(size_t n)
{
    memset(&current, 0, n); /* MEMSET */
    printf("memset %d\n", current.flags);
}

static void copy(const char *s)
{
    strcpy(names, s); /* STRCPY */
    printf("strcpy %s\n", names);
}

static void adjacent(const char *s)
{
    strcpy(label, s); /* ADJACENT */
    printf("adjacent %s\n", label);
}

static void under(int level)
{
    long *t = level_table;
    sink = (size_t)t;
    printf("under %ld\n", t[level - 1]); /* UNDER */
}

/* the pointer through a call's value: nothing names its object, so the moves run and the smash is found at the ret */
__attribute__((noinline)) static char *same(char *p) { return p; }

static void smash(size_t fill)
{
    char buffer[48];
    char *to = same(buffer);
    char source[96];
    memset(source, (int)fill, sizeof source);
    memcpy(to, source, 96); /* SMASH: inlined as moves at -O0 */
    sink = (size_t)buffer[0];
}

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    int bad = strcmp(argv[2], "bad") == 0, all = strcmp(argv[1], "all") == 0;
    if (all || strcmp(argv[1], "loop") == 0) loop(bad ? 10 : 9);
    if (all || strcmp(argv[1], "memset") == 0) clear(bad ? sizeof current + 1 : sizeof current);
    if (all || strcmp(argv[1], "strcpy") == 0) copy(bad ? "abcdefghijklmnopqrstuvw" : "abcdefghijklmnopqrs");
    if (all || strcmp(argv[1], "adjacent") == 0) adjacent(bad ? "abcdefghijklmnopqrst" : "abcdefghijklmno");
    if (all || strcmp(argv[1], "under") == 0) under(bad ? 0 : 1);
    if (strcmp(argv[1], "smash") == 0 && bad) smash('C');
    puts("done");
    return 0;
}
