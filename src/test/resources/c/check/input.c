/* libc's input functions writing past a buffer (CheckInputTest): read, pread, recv (from a pipe, a temporary
 * file, a socket pair), fread and fgets (from a memory stream) into a heap block, a stack array and a global array, 16 bytes
 * too many; "good" reads the same data into a buffer large enough. `./input NAME bad|good`, `./input all good`.
 * The data is always 48 bytes of 'P' (fgets: a 47-character line and its newline). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static volatile size_t extra; /* 0: the compiler cannot see the sizes */
char gline[32];               /* GLINE */
char gafter[32];
static char data[48];

/* the read end of a pipe (or a socket pair) holding the 48 bytes */
static int source(int socket)
{
    int fd[2];
    if (socket ? socketpair(AF_UNIX, SOCK_STREAM, 0, fd) != 0 : pipe(fd) != 0) exit(3);
    if (write(fd[1], data, sizeof data) != (ssize_t)sizeof data) exit(3);
    close(fd[1]);
    return fd[0];
}

static FILE *stream(void)
{
    static char text[49];
    memcpy(text, data, 48);
    text[47] = '\n';
    return fmemopen(text, 48, "r");
}

static long read_heap(int bad)
{
    int fd = source(0);
    char *b = malloc((bad ? 32 : 48) + extra); /* READ_ALLOC */
    long r = read(fd, b, 48 + extra); /* READ */
    r += b[0];
    free(b);
    close(fd);
    return r;
}

static long read_stack(int bad)
{
    int fd = source(0);
    char big[48], small[32]; /* SMALL */
    long r = read(fd, bad ? small : big, 48 + extra); /* READ_STACK */
    r += bad ? small[0] : big[0];
    close(fd);
    return r;
}

static long read_global(int bad)
{
    int fd = source(0);
    long r = read(fd, gline, (bad ? 48 : 32) + extra); /* READ_GLOBAL */
    close(fd);
    return r + gline[0] + gafter[0];
}

static long pread_heap(int bad)
{
    FILE *t = tmpfile(); /* pread needs a file that can seek */
    if (!t || fwrite(data, 1, sizeof data, t) != sizeof data || fflush(t) != 0) exit(3);
    char *b = malloc((bad ? 40 : 48) + extra); /* PREAD_ALLOC */
    long r = pread(fileno(t), b, 48 + extra, 0); /* PREAD */
    r += b[0];
    free(b);
    fclose(t);
    return r;
}

static long recv_heap(int bad)
{
    int fd = source(1);
    char *b = malloc((bad ? 32 : 48) + extra); /* RECV_ALLOC */
    long r = recv(fd, b, 48 + extra, MSG_WAITALL); /* RECV */
    r += b[0];
    free(b);
    close(fd);
    return r;
}

static long fread_heap(int bad)
{
    FILE *f = stream();
    char *b = malloc((bad ? 32 : 48) + extra); /* FREAD_ALLOC */
    long r = (long)fread(b, 8, 6 + extra, f); /* FREAD */
    r += b[0];
    free(b);
    fclose(f);
    return r;
}

static long fgets_heap(int bad)
{
    FILE *f = stream();
    char *b = malloc((bad ? 32 : 64) + extra); /* FGETS_ALLOC */
    long r = fgets(b, 64 + extra, f) != NULL; /* FGETS */
    r += b[0];
    free(b);
    fclose(f);
    return r;
}

static long fgets_stack(int bad)
{
    FILE *f = stream();
    char big[64], line[32]; /* LINE */
    char *to = bad ? line : big;
    long r = fgets(to, 64 + extra, f) != NULL; /* FGETS_STACK */
    fclose(f);
    return r + to[0];
}

static long fgets_global(int bad)
{
    FILE *f = stream();
    static char big[64];
    long r = fgets(bad ? gline : big, 64 + extra, f) != NULL; /* FGETS_GLOBAL */
    fclose(f);
    return r + gline[0] + big[0];
}

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    memset(data, 'P', sizeof data);
    int bad = strcmp(argv[2], "bad") == 0, all = strcmp(argv[1], "all") == 0;
    static const struct { const char *name; long (*run)(int); } cases[] = {
        {"read_heap", read_heap}, {"read_stack", read_stack}, {"read_global", read_global}, {"pread_heap", pread_heap},
        {"recv_heap", recv_heap}, {"fread_heap", fread_heap}, {"fgets_heap", fgets_heap}, {"fgets_stack", fgets_stack},
        {"fgets_global", fgets_global},
    };
    long r = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (all || strcmp(argv[1], cases[i].name) == 0) r += cases[i].run(bad);
    printf("done %ld\n", r);
    return 0;
}
