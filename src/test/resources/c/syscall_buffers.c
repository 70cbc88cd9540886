/* System calls with large heap buffers: poll on 2,000 pollfds, mincore with a 16 KiB vector, writev of 24 x 8 KiB;
 * beyond the agent's limits: writev of 100 separate heap buffers, and sched_getparam (not in the agent's table)
 * into a heap struct. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

int main(void)
{
    struct pollfd *fds = malloc(2000 * sizeof *fds);
    for (int i = 0; i < 2000; i++) { fds[i].fd = 0; fds[i].events = POLLIN; fds[i].revents = 0; }
    fds[1999].fd = 1; fds[1999].events = POLLOUT;
    int n = poll(fds, 2000, 0);
    printf("poll %d revents %d\n", n, fds[1999].revents & POLLOUT);
    size_t pages = 16384;
    void *area = mmap(NULL, pages * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    unsigned char *vec = malloc(pages);
    memset(vec, 7, pages);
    int rc = mincore(area, pages * 4096, vec);
    printf("mincore %d vec[0]=%d vec[16383]=%d\n", rc, vec[0], vec[pages - 1]);
    struct iovec iov[24];
    for (int i = 0; i < 24; i++) { iov[i].iov_base = malloc(8192); memset(iov[i].iov_base, 'a' + i, 8192); iov[i].iov_len = 8192; }
    int fd = open("writev.out", O_WRONLY | O_CREAT | O_TRUNC, 0600);
    long w = writev(fd, iov, 24);
    printf("writev %ld\n", w);
    struct iovec many[100];
    for (int i = 0; i < 100; i++) { many[i].iov_base = malloc(5000); memset(many[i].iov_base, 'A', 5000); many[i].iov_len = 5000; }
    printf("writev of 100 buffers %ld\n", writev(fd, many, 100));
    struct sched_param *param = malloc(sizeof *param);
    param->sched_priority = 99;
    int got = sched_getparam(0, param);
    printf("sched_getparam %d priority %d\n", got, param->sched_priority);
    return 0;
}
