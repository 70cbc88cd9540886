#define _GNU_SOURCE
/* run --check's input functions into stack and global arrays (RunCheckInputTest): scanf %s into a local, gets,
 * fgets, fgets_unlocked, getline and read with a size larger than the array into a global, fgetws and wscanf
 * into a global wide array, glibc 2.38's __isoc23_sscanf (called when the run provides it: glibc 2.36 has it
 * not), getline, fgets and fgetws past a heap block, fgets past a local, and fgets's and fgetws's edges (size 1,
 * a last line without newline, end of input), sscanf past a local far from the stack's top and past a heap
 * block (checked before they store), scanf of a long word from a file, fscanf of every kind of conversion from a
 * pipe past a heap block, scanf %Nc past a global (checked before they store too); "good" reads lines that fit. Built -D_FORTIFY_SOURCE=2 -O2, fgets and read
 * are glibc's __fgets_chk and __read_chk. Each case feeds its own line to stdin through a pipe. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

char *gets(char *s); /* gone from C11's <stdio.h>, not from glibc */
extern int __isoc23_sscanf(const char *s, const char *fmt, ...) __attribute__((weak));

char names[16]; /* NAMES */
char after[16] = "after";
wchar_t wide[8];
wchar_t wafter[8] = L"after";
static volatile int room = 64; /* more than names has: the compiler cannot see it */
static volatile int fits = 15; /* less */

static void feed(const char *s)
{
    int p[2];
    if (pipe(p) || write(p[1], s, strlen(s)) < 0 || dup2(p[0], 0) < 0) exit(3);
    close(p[0]);
    close(p[1]);
    clearerr(stdin);
}

static int scan_word(int bad)
{
    char word[8]; /* WORD */
    feed(bad ? "overlong\n" : "exactly\n");
    if (scanf("%s", word) != 1) return -1; /* SCANF */
    return word[0];
}

static int get_line(int bad)
{
    feed(bad ? "sixteen letters!\n" : "fifteen letters\n");
    if (!gets(names)) return -1; /* GETS */
    return names[0];
}

static int fget_line(int bad)
{
    feed(bad ? "0123456789abcdefghij\n" : "0123456789abc\n");
    if (!fgets(names, room, stdin)) return -1; /* FGETS */
    return names[0];
}

static int fget_unlocked(int bad)
{
    feed(bad ? "0123456789abcdefghij\n" : "0123456789abc\n");
    if (!fgets_unlocked(names, room, stdin)) return -1; /* FGETS_UNLOCKED */
    return names[0];
}

static int get_line_global(int bad)
{
    char *p = names;
    size_t n = (size_t)room;
    feed(bad ? "0123456789abcdefghij\n" : "0123456789abc\n");
    if (getline(&p, &n, stdin) < 0) return -1; /* GETLINE */
    return names[0];
}

static int get_line_heap(int bad)
{
    char *p = malloc(8); /* GETLINE_HEAP_ALLOC */
    size_t n = (size_t)room;
    feed(bad ? "0123456789abcdefghij\n" : "012345\n");
    if (getline(&p, &n, stdin) < 0) return -1; /* GETLINE_HEAP */
    int r = p[0];
    free(p);
    return r;
}

static int read_global(int bad)
{
    feed("0123456789abcdefghij\n");
    if (read(0, names, bad ? room : fits) < 0) return -1; /* READ */
    return names[0];
}

static int fget_wide(int bad)
{
    feed(bad ? "0123456789\n" : "012345\n");
    if (!fgetws(wide, room, stdin)) return -1; /* FGETWS */
    return (int)wide[0];
}

/* fgets and fgetws into a heap block and a local, the line checked before it is stored (check_io.c) */
static int fget_heap(int bad)
{
    char *p = malloc(8); /* FGETS_HEAP_ALLOC */
    feed(bad ? "0123456789abcdef\n" : "012345\n");
    if (!fgets(p, room, stdin)) return -1; /* FGETS_HEAP */
    int r = p[0];
    free(p);
    return r;
}

static int fget_stack(int bad)
{
    char line[8]; /* LINE */
    feed(bad ? "0123456789abcdef\n" : "012345\n");
    if (!fgets(line, room, stdin)) return -1; /* FGETS_STACK */
    return line[0];
}

/* a line of 256 KB into a local of main's callee, given room for it: natively fgets's copy runs past the top of
 * the stack and dies of SIGSEGV in libc; checked before it is stored, it is a report */
static int fget_far(int bad)
{
    static char text[1 << 18];
    char line[8]; /* FAR_LINE */
    memset(text, 'P', sizeof text - 1);
    FILE *f = fmemopen(text, sizeof text - 1, "r");
    if (!f) return -1;
    char *r = fgets(line, bad ? (int)sizeof text : (int)sizeof line, f); /* FGETS_FAR */
    fclose(f);
    return r ? line[0] : -1;
}

static int fget_wide_heap(int bad)
{
    wchar_t *p = malloc(4 * sizeof(wchar_t)); /* FGETWS_HEAP_ALLOC */
    feed(bad ? "0123456789\n" : "01\n");
    if (!fgetws(p, room, stdin)) return -1; /* FGETWS_HEAP */
    int r = (int)p[0];
    free(p);
    return r;
}

/* what glibc does at the edges: size 1 (the terminator alone, no character read), a last line without its
 * newline, the end of input (NULL, the buffer as it was), size 0 (NULL) */
static int fget_edges(int bad)
{
    char b[4] = "xyz";
    (void)bad;
    feed("ab");
    char *one = fgets(b, 1, stdin);
    printf("one %d [%s]", one == b, b);
    char *last = fgets(b, 4, stdin);
    printf(" last %d [%s]", last == b, b);
    strcpy(b, "xyz");
    char *end = fgets(b, 4, stdin);
    char *none = fgets(b, 0, stdin);
    printf(" eof %d %d [%s] %d\n", end == NULL, none == NULL, b, feof(stdin) != 0);
    return 0;
}

static int fget_wide_edges(int bad)
{
    wchar_t b[4] = L"xyz";
    (void)bad;
    feed("ab");
    wchar_t *one = fgetws(b, 1, stdin);
    printf("one %d [%ls]", one == b, b);
    wchar_t *last = fgetws(b, 4, stdin);
    printf(" last %d [%ls]", last == b, b);
    wcscpy(b, L"xyz");
    wchar_t *end = fgetws(b, 4, stdin);
    printf(" eof %d [%ls] %d\n", end == NULL, b, feof(stdin) != 0);
    return 0;
}

static int scan_wide(int bad)
{
    feed(bad ? "overlong\n" : "exactly\n");
    if (wscanf(L"%ls", wide) != 1) return -1; /* WSCANF */
    return (int)wide[0];
}

static int scan_c23(int bad)
{
    const char *in = bad ? "0123456789abcdefghij" : "0123456789abc";
    if ((__isoc23_sscanf ? __isoc23_sscanf(in, "%s", names) : sscanf(in, "%s", names)) != 1) return -1; /* ISOC23 */
    return names[0];
}

/* sscanf of a 256 KB word into a local of main's callee: natively the copy runs past the top of the stack and
 * dies of SIGSEGV in libc; run aside first (check_scan.h), it is a report before a byte is stored */
static int sscan_far(int bad)
{
    static char text[1 << 18];
    char word[8]; /* SSCANF_FAR_WORD */
    memset(text, 'P', sizeof text - 1);
    if (sscanf(bad ? text : "seven77", "%s", word) != 1) return -1; /* SSCANF_FAR */
    return word[0];
}

/* the same with swscanf's %ls: 64 K wide characters into a local of two */
static int swscan_far(int bad)
{
    static wchar_t text[1 << 16];
    wchar_t word[2]; /* SWSCANF_FAR_WORD */
    wmemset(text, L'W', sizeof text / sizeof *text - 1);
    if (swscanf(bad ? text : L"w", L"%ls", word) != 1) return -1; /* SWSCANF_FAR */
    return (int)word[0];
}

/* sscanf past a heap block whose neighbour holds a canary, amid conversions whose results (the count, numbers,
 * %c, %n, %[, errno: ERANGE from the too large number) the good run prints */
static int sscan_heap(int bad)
{
    char *p = malloc(8); /* SSCANF_HEAP_ALLOC */
    char *canary = malloc(8);
    strcpy(canary, "canary");
    int a = 0, n = 0;
    long big = 0;
    double d = 0;
    char c = 0, set[8] = "";
    errno = 0;
    const char *in = bad ? "12 0123456789abcdef 2.5 x 99999999999999999999999 yz" : "12 0123456 2.5 x 99999999999999999999999 yz";
    int r = sscanf(in, "%d %s %lf %c %ld %n%7[xyz]", &a, p, &d, &c, &big, &n, set); /* SSCANF_HEAP */
    int e = errno;
    printf("sscanf %d %d %s %g %c %ld %d %s errno %d %s\n", r, a, p, d, c, big, n, set, e, canary);
    free(canary);
    free(p);
    return r;
}

/* swscanf's %s into a char array: glibc stores the word and two terminators (wcrtomb's and its own), so "abc"
 * overflows a local of 4 by one byte */
static int swscan_narrow(int bad)
{
    char b[4]; /* SWSCANF_NARROW_WORD */
    if (swscanf(bad ? L"abc" : L"ab", L"%s", b) != 1) return -1; /* SWSCANF_NARROW */
    return b[0];
}

/* stdin from a file of n bytes of text (a pipe holds 64 KB only) */
static void feed_file(const char *text, size_t n)
{
    FILE *t = tmpfile();
    if (!t || fwrite(text, 1, n, t) != n || fflush(t) || lseek(fileno(t), 0, SEEK_SET) || dup2(fileno(t), 0) < 0) exit(3);
    fclose(t);
    clearerr(stdin);
}

/* scanf of a 256 KB word from a file into a local of main's callee: natively the copy runs past the top of the
 * stack and dies of SIGSEGV in libc; made into the runtime's %ms (check_scan.h), it is a report before a byte of
 * the word is stored. The next characters are still the stream's. */
static int scan_far(int bad)
{
    static char text[(1 << 18) + 8];
    char word[8]; /* SCANF_FAR_WORD */
    memset(text, 'P', 1 << 18);
    strcpy(text + (1 << 18), " next");
    feed_file(bad ? text : "seven77 next", bad ? strlen(text) : 12);
    if (scanf("%s", word) != 1) return -1; /* SCANF_FAR */
    char next[8] = "";
    printf("scanf %s %d %s\n", word, scanf("%7s", next), next);
    return word[0];
}

/* fscanf from a pipe with every kind of conversion, a partial match and the end of input; bad: the %[ past a
 * heap block whose neighbour holds a canary */
static int fscan_heap(int bad)
{
    char *p = malloc(8); /* FSCANF_HEAP_ALLOC */
    char *canary = malloc(8);
    strcpy(canary, "canary");
    int a = 0, n = -1, m = -1, x = 7, y = 8;
    long big = 0;
    double d = 0;
    char w[6] = "", c3[4] = "...";
    signed char hh = 0;
    short h = 0;
    wchar_t ws[4] = L"";
    errno = 0;
    feed(bad ? "12 abcdefgh xyz 2.5 99999999999999999999 70000 wid 300 letterstoolong 4,\n" :
               "12 abcdefgh xyz 2.5 99999999999999999999 70000 wid 300 letters 4,\n");
    const char *f = "%d %5s%n%[a-z] %3c %lf %ld %hd %3ls %hhd %hhn%[a-z]";
    int r = fscanf(stdin, f, &a, w, &n, p, c3, &d, &big, &h, ws, &hh, &hh, p); /* FSCANF_HEAP */
    int e = errno;
    printf("fscanf %d %d %s %d %s %.3s %g %ld %d %ls %d %s errno %d %s\n", r, a, w, n, p, c3, d, big, h, ws, hh, p, e, canary);
    r = fscanf(stdin, "%d,%d%n", &x, &y, &m);   /* a partial match: x only */
    printf("partial %d %d %d %d\n", r, x, y, m);
    r = fscanf(stdin, "%5c", c3);   /* the end of input */
    printf("eof %d %d %.3s\n", r, feof(stdin) != 0, c3);
    free(canary);
    free(p);
    return r;
}

/* scanf %Nc and %Ns past a global: the width is the program's, larger than the array */
static int scan_global(int bad)
{
    feed(bad ? "0123456789abcdefghij" : "0123456789abc");
    int r = bad ? scanf("%20c", names) : scanf("%13c", names); /* SCANF_GLOBAL */
    printf("global %d %.13s\n", r, names);
    return r;
}

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    int bad = strcmp(argv[2], "bad") == 0, r = 0;
    if (strcmp(argv[1], "scanf") == 0) r = scan_word(bad); /* MAIN_SCANF */
    else if (strcmp(argv[1], "gets") == 0) r = get_line(bad);
    else if (strcmp(argv[1], "fgets") == 0) r = fget_line(bad);
    else if (strcmp(argv[1], "fgets_unlocked") == 0) r = fget_unlocked(bad);
    else if (strcmp(argv[1], "getline") == 0) r = get_line_global(bad);
    else if (strcmp(argv[1], "getline_heap") == 0) r = get_line_heap(bad);
    else if (strcmp(argv[1], "read") == 0) r = read_global(bad);
    else if (strcmp(argv[1], "fgetws") == 0) r = fget_wide(bad);
    else if (strcmp(argv[1], "wscanf") == 0) r = scan_wide(bad);
    else if (strcmp(argv[1], "isoc23") == 0) r = scan_c23(bad);
    else if (strcmp(argv[1], "fgets_heap") == 0) r = fget_heap(bad);
    else if (strcmp(argv[1], "fgets_stack") == 0) r = fget_stack(bad);
    else if (strcmp(argv[1], "fgets_far") == 0) r = fget_far(bad);
    else if (strcmp(argv[1], "fgetws_heap") == 0) r = fget_wide_heap(bad);
    else if (strcmp(argv[1], "fgets_edges") == 0) r = fget_edges(bad);
    else if (strcmp(argv[1], "fgetws_edges") == 0) r = fget_wide_edges(bad);
    else if (strcmp(argv[1], "sscanf_far") == 0) r = sscan_far(bad);
    else if (strcmp(argv[1], "sscanf_heap") == 0) r = sscan_heap(bad);
    else if (strcmp(argv[1], "swscanf_far") == 0) r = swscan_far(bad);
    else if (strcmp(argv[1], "swscanf_narrow") == 0) r = swscan_narrow(bad);
    else if (strcmp(argv[1], "scanf_far") == 0) r = scan_far(bad);
    else if (strcmp(argv[1], "fscanf_heap") == 0) r = fscan_heap(bad);
    else if (strcmp(argv[1], "scanf_global") == 0) r = scan_global(bad);
    else if (strcmp(argv[1], "all") == 0)   /* the narrow ones (a wide read would orient stdin) */
        r = get_line(bad) + fget_line(bad) + scan_word(bad) + fget_unlocked(bad) + get_line_global(bad) +
            get_line_heap(bad) + read_global(bad) + scan_c23(bad) + fget_heap(bad) + fget_stack(bad);
    printf("done %d %s %ls\n", r, after, wafter);
    return 0;
}
