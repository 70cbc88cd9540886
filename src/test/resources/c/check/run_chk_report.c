/* run --check's reports of _FORTIFY_SOURCE functions into stack arrays nobody instrumented (RunCheckReportTest),
 * built plain gcc -O2 -g -D_FORTIFY_SOURCE=2: memcpy (__memcpy_chk) of 24 bytes into a char[16], strcpy
 * (__strcpy_chk) of 17 bytes into a char[8], and __gets_chk (what gcc makes of gets there) of a 20-character
 * line into a char[8], after which the program prints how long the string in the array is. "good" copies and
 * reads what fits. Each gets case feeds its own line to stdin through a pipe. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *__gets_chk(char *s, size_t size);

static const char letters[] = "abcdefghijklmnopqrstuvwxyz0123456789";

__attribute__((noinline)) static void fill(size_t n)
{
    char buf[16];
    memcpy(buf, letters, n); /* MEMCPY */
    printf("%c%c\n", buf[0], buf[n - 1]);
}

__attribute__((noinline)) static void copy(const char *src)
{
    char name[8];
    strcpy(name, src); /* STRCPY */
    printf("%s\n", name);
}

__attribute__((noinline)) static void read_line(void)
{
    char line[8]; /* LINE */
    if (!__gets_chk(line, sizeof line)) exit(3); /* GETS */
    printf("%zu %c\n", strlen(line), line[0]);
}

static void feed(const char *text)
{
    int p[2];
    if (pipe(p) || write(p[1], text, strlen(text)) < 0 || close(p[1]) || dup2(p[0], 0) < 0) exit(4);
}

int main(int argc, char **argv)
{
    int bad = argc > 2 && strcmp(argv[2], "bad") == 0;
    if (argc < 2) return 2;
    if (strcmp(argv[1], "memcpy") == 0) fill(bad ? 24 : 16);
    else if (strcmp(argv[1], "strcpy") == 0) copy(bad ? letters + 19 : letters + 29);
    else if (strcmp(argv[1], "gets") == 0) {
        feed(bad ? "abcdefghijklmnopqrst\nrest\n" : "abcdefg\nrest\n");
        read_line(); /* READ_LINE */
    } else return 2;
    puts("done");
    return 0;
}
