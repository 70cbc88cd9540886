/* Ranges longer than 57 bytes (eight granules: the runtime's one-word quick test before) through the libc
 * wrappers, gcc's check of an odd-sized access (__asan_storeN) and fgets, whose line arrives over several of the
 * stream's buffer refills. Each case writes one byte too many (or into a freed block) when given "bad"; its twin
 * stays inside. CheckLongRangeTest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char src[4096];

static void memcpy_long(int bad)
{
    char *b = malloc(200); /* MEMCPY_ALLOC */
    memcpy(b + 1, src, bad ? 200 : 199); /* MEMCPY */
    printf("%d\n", b[7]);
    free(b);
}

static void memset_freed(int bad)
{
    char *a = malloc(100), *c = malloc(100); /* FREED_ALLOC */
    free(a); /* FREED_FREE */
    memset(bad ? a : c, 1, 100); /* FREED */
    free(c);
}

static void memset_long(int bad)
{
    char *b = malloc(1000); /* MEMSET_ALLOC */
    memset(b, 0, bad ? 1001 : 1000); /* MEMSET */
    printf("%d\n", b[999]);
    free(b);
}

struct big { char x[77]; };

static void odd_size(int bad)
{
    struct big *b = malloc(bad ? 76 : 77), v; /* ODD_ALLOC */
    memset(&v, 3, sizeof v);
    *b = v; /* ODD */
    printf("%d\n", b->x[5]);
    free(b);
}

static void fgets_long(int bad)
{
    FILE *f = tmpfile();
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 9000; j++) fputc('a' + (i + j) % 26, f);
        fputc('\n', f);
    }
    rewind(f);
    char *b = malloc(bad ? 9001 : 9002); /* FGETS_ALLOC */
    long sum = 0, lines = 0;
    while (fgets(b, 9002, f)) { /* FGETS */
        sum += (long)strlen(b);
        lines += b[strlen(b) - 1] == '\n';
    }
    printf("%ld %ld %c\n", sum, lines, b[0]);
    free(b);
    fclose(f);
}

int main(int argc, char **argv)
{
    memset(src, 7, sizeof src);
    int bad = argc > 2 && strcmp(argv[2], "bad") == 0;
    const char *w = argc > 1 ? argv[1] : "all";
    int all = strcmp(w, "all") == 0;
    if (all || !strcmp(w, "memcpy_long")) memcpy_long(bad);
    if (all || !strcmp(w, "memset_freed")) memset_freed(bad);
    if (all || !strcmp(w, "memset_long")) memset_long(bad);
    if (all || !strcmp(w, "odd_size")) odd_size(bad);
    if (all || !strcmp(w, "fgets_long")) fgets_long(bad);
    puts("done");
    return 0;
}
