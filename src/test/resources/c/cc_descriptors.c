/* The trace's descriptor under a program that clears descriptors (issue 26). argv[1]: how: close (libc),
   raw (system calls on 0-1023, standard output too), range (close_range), from (closefrom), dup2 (its own file dup2'd onto every number,
   then closed). Then it opens 1000 files, storing into sink between writes (2 * 1000 * 256 stores), and
   checks that each file holds only the line it wrote. Prints "opened N, wrong W" (when it can) and exits 0 only when all 1000 are right. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/close_range.h>
long sink[256];
int main(int argc, char **argv) {
    const char *how = argv[1];
    if (!strcmp(how, "close")) for (int fd = 3; fd < 1024; fd++) close(fd);
    else if (!strcmp(how, "raw")) for (int fd = 0; fd < 1024; fd++) syscall(SYS_close, fd);
    else if (!strcmp(how, "range")) close_range(3, ~0U, 0);
    else if (!strcmp(how, "from")) closefrom(3);
    else if (!strcmp(how, "dup2")) {
        int own = open("own.dat", O_WRONLY | O_CREAT | O_TRUNC, 0600);
        for (int fd = 3; fd < 1024; fd++) if (fd != own) dup2(own, fd);
        for (int fd = 3; fd < 1024; fd++) close(fd);
    }
    static int fds[1000];
    char name[64], line[64];
    int n = 0;
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof name, "f%d.dat", i);
        fds[i] = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (fds[i] < 0) break;
        n++;
        for (int k = 0; k < 256; k++) sink[k] = k + i;
    }
    for (int i = 0; i < n; i++) {
        int len = snprintf(line, sizeof line, "file %d\n", i);
        if (write(fds[i], line, len) != len) return 2;
        for (int k = 0; k < 256; k++) sink[k] += i;
    }
    int bad = 0;
    for (int i = 0; i < n; i++) {
        char got[64];
        long r = pread(fds[i], got, sizeof got, 0);
        int len = snprintf(line, sizeof line, "file %d\n", i);
        if (r != len || memcmp(got, line, len)) bad++;
        close(fds[i]);
        snprintf(name, sizeof name, "f%d.dat", i);
        unlink(name);
    }
    printf("opened %d, wrong %d\n", n, bad);
    return n == 1000 && bad == 0 ? 0 : 1;
}
