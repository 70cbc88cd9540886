/* A read into the heap through io_uring (issue 26), with raw system calls (no liburing): one
   IORING_OP_READ of io_uring_read.txt into a malloc'd buffer, then its completion. Where io_uring_setup
   fails (ENOSYS: a kernel without it, or memtrace's fault mode) the program falls back to read(), as
   liburing users do. Prints "io_uring read N: TEXT" or "io_uring unavailable (ERRNO), read N: TEXT"; a
   failed io_uring read prints "io_uring read failed: ERRNO" and exits 1. */
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
    int file = open("io_uring_read.txt", O_RDONLY);
    char *buf = malloc(64);
    memset(buf, 0, 64);
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    long ring = syscall(SYS_io_uring_setup, 4, &p);
    if (ring < 0) {
        int e = errno;
        long n = read(file, buf, 63);
        printf("io_uring unavailable (%s), read %ld: %s\n", strerror(e), n, buf);
        return 0;
    }
    size_t sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned), cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
    char *sq = mmap(0, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_SQ_RING);
    char *cq = mmap(0, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring, IORING_OFF_CQ_RING);
    struct io_uring_sqe *sqes = mmap(0, p.sq_entries * sizeof *sqes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring,
                                     IORING_OFF_SQES);
    if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED) return 2;
    unsigned *sq_tail = (unsigned *)(sq + p.sq_off.tail), *sq_array = (unsigned *)(sq + p.sq_off.array);
    unsigned mask = *(unsigned *)(sq + p.sq_off.ring_mask), tail = *sq_tail, index = tail & mask;
    struct io_uring_sqe *e = &sqes[index];
    memset(e, 0, sizeof *e);
    e->opcode = IORING_OP_READ;
    e->fd = file;
    e->addr = (unsigned long)buf;
    e->len = 63;
    e->off = 0;
    sq_array[index] = index;
    __atomic_store_n(sq_tail, tail + 1, __ATOMIC_RELEASE);
    if (syscall(SYS_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0) return 3;
    unsigned *cq_head = (unsigned *)(cq + p.cq_off.head);
    struct io_uring_cqe *cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
    unsigned cmask = *(unsigned *)(cq + p.cq_off.ring_mask);
    struct io_uring_cqe *c = &cqes[*cq_head & cmask];
    if (c->res < 0) {
        printf("io_uring read failed: %s\n", strerror(-c->res));
        return 1;
    }
    printf("io_uring read %d: %s\n", c->res, buf);
    __atomic_store_n(cq_head, *cq_head + 1, __ATOMIC_RELEASE);
    return 0;
}
