/*
 * Runtime test: the wrapped calls, each once, with the results printed so a test can expect the exact
 * events: allocations, a mapping, block operations, I/O through a pipe and stdio, start/stop, dlopen.
 * Built with -fno-builtin so that memcpy & co. are real calls.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>
#include "memtrace.h"
#include "mt_probe.h"

int main(void)
{
    mt_print_sites();
    char *a = malloc(100);
    char *b = calloc(10, 20);
    char *c = realloc(a, 300);
    void *d = NULL;
    int rc = posix_memalign(&d, 64, 128);
    char *e = aligned_alloc(32, 64);
    char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    printf("MALLOC %lx\nCALLOC %lx\nREALLOC %lx\nMEMALIGN %d %lx\nALIGNED %lx\nMMAP %lx\n", (unsigned long)a,
           (unsigned long)b, (unsigned long)c, rc, (unsigned long)d, (unsigned long)e, (unsigned long)m);
    memset(b, 7, 200);
    memcpy(c, b, 150);
    memmove(c + 1, c, 50);
    int fds[2];
    if (pipe(fds)) return 1;
    ssize_t w = write(fds[1], b, 33);
    ssize_t r = read(fds[0], c, 100);
    struct iovec iov[2] = {{b, 5}, {b + 10, 6}};
    ssize_t wv = writev(fds[1], iov, 2);
    struct iovec rv[2] = {{c, 4}, {c + 20, 100}};
    ssize_t rr = readv(fds[0], rv, 2);
    FILE *f = tmpfile();
    size_t fw = fwrite(b, 4, 5, f);
    rewind(f);
    size_t fr = fread(c, 2, 100, f);
    fclose(f);
    printf("IO %zd %zd %zd %zd %zu %zu\n", w, r, wv, rr, fw, fr);
    memtrace_stop();
    long v;
    MT_LOAD8(v, (long *)b);   /* not recorded: stopped */
    memset(b, 1, 10);         /* not recorded either */
    memtrace_start();
    MT_LOAD8(v, (long *)c);
    (void)v;
    printf("DLOPEN %s\n", dlopen("libm.so.6", RTLD_NOW) ? "ok" : "failed");
    munmap(m, 8192);
    free(e);
    free(d);
    free(c);
    free(b);
    fflush(stdout);
    return 0;
}
