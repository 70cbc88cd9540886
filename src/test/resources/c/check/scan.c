/* libc's input functions scanf's family (%ls too, %'s), the wide one (swscanf, fwscanf), fgetws, gets, readv and recvmsg writing past a buffer (CheckScanTest): 48 bytes
 * of 'P' (from stdin, a string, a memory stream, a pipe, a socket pair) into a heap block, a stack array and a
 * global array, 16 bytes too many; "good" reads the same data into a buffer large enough, as Juliet's good
 * functions do. `./scan NAME bad|good`, `./scan all good`. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include <wchar.h>

char *gets(char *s); /* gone from C11's <stdio.h>, still in glibc */

static volatile size_t extra; /* 0: the compiler cannot see the sizes */
char gword[32];               /* GWORD */
char gafter[32];
static char data[49];
static wchar_t wdata[49];

/* the read end of a pipe (or a socket pair) holding the 48 bytes */
static int source(int socket)
{
    int fd[2];
    if (socket ? socketpair(AF_UNIX, SOCK_STREAM, 0, fd) != 0 : pipe(fd) != 0) exit(3);
    if (write(fd[1], data, 48) != 48) exit(3);
    close(fd[1]);
    return fd[0];
}

/* stdin reads the 48 bytes, then its end */
static void input(void)
{
    int fd = source(0);
    if (dup2(fd, 0) != 0) exit(3);
    close(fd);
    clearerr(stdin);
}

static long scanf_stack(int bad)
{
    input();
    char big[64], word[32]; /* WORD */
    char *to = bad ? word : big;
    long r = scanf("%s", to); /* SCANF */
    return r + to[0];
}

static long sscanf_heap(int bad)
{
    char *b = malloc((bad ? 32 : 49) + extra); /* SSCANF_ALLOC */
    long r = sscanf(data, "%s", b); /* SSCANF */
    r += b[0];
    free(b);
    return r;
}

/* glibc takes the ' and I flags before the width of any conversion (a %s too, grouping nothing): the walk of
 * the format must read them so, or it takes ' for the conversion and misses the string */
static long sscanf_flag_heap(int bad)
{
    char *b = malloc((bad ? 32 : 49) + extra); /* SSCANF_FLAG_ALLOC */
    long r = sscanf(data, "%'s", b); /* SSCANF_FLAG */
    r += b[0];
    free(b);
    return r;
}

static long sscanf_set_global(int bad)
{
    static char big[64];
    long r = sscanf(data, "%[P]", bad ? gword : big); /* SSCANF_SET */
    return r + gword[0] + big[0];
}

static long fscanf_chars_heap(int bad)
{
    FILE *f = fmemopen(data, 48, "r");
    int n;
    char *b = malloc((bad ? 40 : 48) + extra); /* FSCANF_ALLOC */
    long r = fscanf(f, "%*2c%46c%n", b, &n); /* FSCANF */
    fclose(f);
    r += b[0] + n;
    free(b);
    return r;
}

static long sscanf_wide_heap(int bad)
{
    wchar_t *b = malloc((bad ? 32 : 49) * sizeof(wchar_t) + extra); /* SSCANF_WIDE_ALLOC */
    long r = sscanf(data, "%ls", b); /* SSCANF_WIDE */
    r += b[0];
    free(b);
    return r;
}

static long fgetws_stack(int bad)
{
    FILE *f = fdopen(source(0), "r"); /* not fmemopen: glibc's cookie streams have no wide side */
    wchar_t big[64], line[32]; /* WLINE */
    wchar_t *to = bad ? line : big;
    long r = fgetws(to, 64 + extra, f) != NULL; /* FGETWS */
    fclose(f);
    return r + to[0];
}

static long swscanf_heap(int bad)
{
    wchar_t *b = malloc((bad ? 32 : 49) * sizeof(wchar_t) + extra); /* SWSCANF_ALLOC */
    long r = swscanf(wdata, L"%ls", b); /* SWSCANF */
    r += b[0];
    free(b);
    return r;
}

static long fwscanf_stack(int bad)
{
    FILE *f = fdopen(source(0), "r"); /* a stream of its own: stdin is byte-oriented by the other cases */
    char big[64], word[32]; /* FWWORD */
    char *to = bad ? word : big;
    long r = fwscanf(f, L"%s", to); /* FWSCANF */
    fclose(f);
    return r + to[0];
}

static long gets_stack(int bad)
{
    input();
    char big[64], line[32]; /* LINE */
    char *to = bad ? line : big;
    long r = gets(to) != NULL; /* GETS */
    return r + to[0];
}

static long readv_heap(int bad)
{
    int fd = source(0);
    char head[16];
    char *b = malloc((bad ? 16 : 32) + extra); /* READV_ALLOC */
    struct iovec iov[2] = {{head, sizeof head}, {b, 32 + extra}};
    long r = readv(fd, iov, 2); /* READV */
    r += b[0];
    free(b);
    close(fd);
    return r;
}

static long recvmsg_heap(int bad)
{
    int fd = source(1);
    char *b = malloc((bad ? 32 : 48) + extra); /* RECVMSG_ALLOC */
    struct iovec iov = {b, 48 + extra};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    long r = recvmsg(fd, &m, MSG_WAITALL); /* RECVMSG */
    r += b[0];
    free(b);
    close(fd);
    return r;
}

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    memset(data, 'P', 48);
    wmemset(wdata, L'P', 48);
    int bad = strcmp(argv[2], "bad") == 0, all = strcmp(argv[1], "all") == 0;
    static const struct { const char *name; long (*run)(int); } cases[] = {
        {"scanf_stack", scanf_stack}, {"sscanf_heap", sscanf_heap}, {"sscanf_set_global", sscanf_set_global},
        {"fscanf_chars_heap", fscanf_chars_heap}, {"gets_stack", gets_stack}, {"readv_heap", readv_heap},
        {"recvmsg_heap", recvmsg_heap}, {"sscanf_wide_heap", sscanf_wide_heap}, {"fgetws_stack", fgetws_stack},
        {"swscanf_heap", swscanf_heap}, {"fwscanf_stack", fwscanf_stack}, {"sscanf_flag_heap", sscanf_flag_heap},
    };
    long r = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (all || strcmp(argv[1], cases[i].name) == 0) r += cases[i].run(bad);
    printf("done %ld\n", r);
    return 0;
}
