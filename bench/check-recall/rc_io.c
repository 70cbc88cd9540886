/* rc_io.c: the corpus's helpers (rc.h), built like the cases (checked or not). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "rc.h"

static void *volatile kept;

void rc_sum(const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    unsigned long sum = 0;
    for (size_t i = 0; i < n; i++) sum = sum * 31 + b[i];
    printf("%zu bytes, sum %lx\n", n, sum);
}
void rc_int(long v) { printf("%ld\n", v); }
size_t rc_n(size_t n) { return n; }
void *rc_p(void *p) { return p; }
void rc_keep(void *p) { kept = p; }
void rc_drop(void) { kept = NULL; }
int rc_pipe(size_t n)
{
    int fd[2];
    char b[4096];
    if (n > sizeof b || pipe(fd) != 0) return -1;
    memset(b, 'P', n);
    if (write(fd[1], b, n) != (ssize_t)n) return -1;
    close(fd[1]);
    return fd[0];
}
