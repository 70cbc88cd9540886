/* run --check's input functions into stack and global arrays (RunCheckInputTest): scanf %s into a local, gets
 * and fgets with a size larger than the array into a global; "good" reads lines that fit. Each case feeds its
 * own line to stdin through a pipe. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *gets(char *s); /* gone from C11's <stdio.h>, not from glibc */

char names[16]; /* NAMES */
char after[16] = "after";
static volatile int room = 64; /* more than names has: the compiler cannot see it */

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

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    int bad = strcmp(argv[2], "bad") == 0, r = 0;
    if (strcmp(argv[1], "scanf") == 0) r = scan_word(bad); /* MAIN_SCANF */
    else if (strcmp(argv[1], "gets") == 0) r = get_line(bad);
    else if (strcmp(argv[1], "fgets") == 0) r = fget_line(bad);
    else if (strcmp(argv[1], "all") == 0) r = get_line(bad) + fget_line(bad) + scan_word(bad);
    printf("done %d %s\n", r, after);
    return 0;
}
