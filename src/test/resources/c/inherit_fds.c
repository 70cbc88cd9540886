/* Descriptors the program inherits (docs/trust.md, "Descriptors"): prints fd 3's offset, copies what is left
   of fd 3 to fd 5, then lists its open descriptors on standard output, one "N target" a line in number
   order (its own directory descriptor left out, a pipe's inode as "pipe"). Exits 1 when 3 or 5 fails. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int main(void) {
    char buf[256];
    off_t at = lseek(3, 0, SEEK_CUR);
    ssize_t n = read(3, buf, sizeof buf);
    if (n < 0 || write(5, buf, (size_t)n) != n) return 1;
    printf("offset %ld\n", (long)at);
    DIR *d = opendir("/proc/self/fd");
    if (!d) return 1;
    int fds[4096], k = 0;
    struct dirent *e;
    while ((e = readdir(d)) && k < 4096)
        if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d)) fds[k++] = atoi(e->d_name);
    closedir(d);
    for (int i = 0; i < k; i++)
        for (int j = i + 1; j < k; j++)
            if (fds[j] < fds[i]) { int t = fds[i]; fds[i] = fds[j]; fds[j] = t; }
    for (int i = 0; i < k; i++) {
        char path[64], target[4096];
        snprintf(path, sizeof path, "/proc/self/fd/%d", fds[i]);
        ssize_t m = readlink(path, target, sizeof target - 1);
        target[m < 0 ? 0 : m] = 0;
        printf("%d %s\n", fds[i], strncmp(target, "pipe:", 5) == 0 ? "pipe" : target);
    }
    return 0;
}
