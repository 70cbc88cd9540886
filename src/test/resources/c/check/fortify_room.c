/* _FORTIFY_SOURCE's line readers given more room than the buffer has (CheckFortifyRoomTest): fgets, fgets_unlocked
 * and fgetws into an 8-character stack array with a size of 64, which gcc -O2 -D_FORTIFY_SOURCE=2 or 3 turns into
 * __fgets_chk(b, 8, 64, f) and its kin. glibc 2.36's fails only when a line read does not fit: "good" reads lines
 * that do (the last one at the end of the input, no newline), "bad" a line of 7 characters and its newline, one
 * byte too many; fgets_one asks for a size of 1. `./fortify_room NAME good|bad`, `./fortify_room all good`; each
 * line read is printed. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

static volatile int room = 64, one = 1; /* the size arguments, unknown to gcc: the _chk calls, not warnings */

static FILE *stream(int bad)
{
    static const char good_text[] = "ab\nabcdef\nabcdefg", bad_text[] = "ab\nabcdefg\nxy\n";
    const char *t = bad ? bad_text : good_text;
    /* a file written by its descriptor: neither an fmemopen stream nor one fputs oriented takes fgetws */
    FILE *f = tmpfile();
    if (!f || write(fileno(f), t, strlen(t)) != (ssize_t)strlen(t)) return NULL;
    rewind(f);
    return f;
}

static int fgets_room(int bad)
{
    FILE *f = stream(bad);
    if (!f) exit(3);
    char b[8]; /* B */
    int n = 0;
    while (fgets(b, room, f)) n += printf("[%s]", b); /* FGETS */
    fclose(f);
    return n;
}

static int fgets_unlocked_room(int bad)
{
    FILE *f = stream(bad);
    if (!f) exit(3);
    char u[8]; /* U */
    int n = 0;
    while (fgets_unlocked(u, room, f)) n += printf("[%s]", u); /* FGETS_UNLOCKED */
    fclose(f);
    return n;
}

static int fgetws_room(int bad)
{
    FILE *f = stream(bad);
    if (!f) exit(3);
    wchar_t w[8]; /* W */
    int n = 0;
    while (fgetws(w, room, f)) n += printf("[%ls]", w); /* FGETWS */
    fclose(f);
    return n;
}

/* a size of 1: glibc's __fgets_chk reads nothing and returns NULL (the plain fgets an empty string) */
static int fgets_one(int bad)
{
    FILE *f = stream(bad);
    if (!f) exit(3);
    char b[8] = "zz";
    int n = printf("[%s %s]", fgets(b, one, f) ? "buffer" : "NULL", b);
    fclose(f);
    return n;
}

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    int bad = strcmp(argv[2], "bad") == 0, all = strcmp(argv[1], "all") == 0, n = 0;
    static const struct { const char *name; int (*run)(int); } cases[] = {
        {"fgets", fgets_room}, {"fgets_unlocked", fgets_unlocked_room}, {"fgetws", fgetws_room},
        {"fgets_one", fgets_one},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (all || strcmp(argv[1], cases[i].name) == 0) n += cases[i].run(bad);
    printf("\ndone %d\n", n);
    return 0;
}
