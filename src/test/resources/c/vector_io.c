/* The system calls whose buffers are named by an array in program memory, with a second thread alive:
 * writev of three heap buffers (the iovec array in the heap too) into the file argv[1], readv of it back
 * into .bss and the heap, sendmsg of a heap and a .data buffer with a descriptor (SCM_RIGHTS, the control
 * buffer in the heap) on a datagram socketpair, recvmsg of it into two heap buffers (the msghdr in the
 * heap), and process_vm_readv of .data into the heap from this process itself. Under memtrace none may
 * open a page (windows at risk 0) and each must do what it does untraced.
 *
 * Prints one line per call, "NAME RESULT" and what came back, then one line "at NAME 0xADDRESS" per
 * buffer, for the test to find the block events of each call at those addresses. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

char bss_in[6000];
char data_out[500] = "data";
static int gate[2];

static void *waiter(void *arg)
{
    char c;
    (void)arg;
    return read(gate[0], &c, 1) == 1 ? NULL : (void *)1;
}

static unsigned long sum(const char *p, size_t n)
{
    unsigned long s = 0;
    for (size_t i = 0; i < n; i++) s = s * 31 + (unsigned char)p[i];
    return s;
}

int main(int argc, char **argv)
{
    if (argc < 2 || pipe(gate)) return 1;
    pthread_t t;
    pthread_create(&t, NULL, waiter, NULL);

    size_t len[3] = {5000, 3000, 20000};
    char *out[3];
    struct iovec *iov = malloc(3 * sizeof *iov);
    for (int i = 0; i < 3; i++) {
        out[i] = malloc(len[i]);
        for (size_t k = 0; k < len[i]; k++) out[i][k] = (char)(k * 7 + i);
        iov[i] = (struct iovec){out[i], len[i]};
    }
    int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
    long wrote = writev(fd, iov, 3);
    char *heap_in = malloc(22000);
    lseek(fd, 0, SEEK_SET);
    iov[0] = (struct iovec){bss_in, sizeof bss_in};
    iov[1] = (struct iovec){heap_in, 22000};
    long got = readv(fd, iov, 2);
    close(fd);
    unsigned long expect = sum(out[0], 5000) ^ sum(out[1], 3000) ^ sum(out[2], 20000);
    int same = memcmp(bss_in, out[0], 5000) == 0 && memcmp(bss_in + 5000, out[1], 1000) == 0 &&
               memcmp(heap_in, out[1] + 1000, 2000) == 0 && memcmp(heap_in + 2000, out[2], 20000) == 0;
    printf("writev %ld readv %ld same %d sum %lx\n", wrote, got, same, expect);

    int sv[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv)) return 1;
    char *msg = malloc(1000);
    for (int k = 0; k < 1000; k++) msg[k] = (char)('a' + k % 26);
    memset(data_out + 4, 'z', sizeof data_out - 4);
    struct msghdr *mh = calloc(1, sizeof *mh);
    struct iovec *siov = malloc(2 * sizeof *siov);
    siov[0] = (struct iovec){msg, 1000};
    siov[1] = (struct iovec){data_out, sizeof data_out};
    char *control = calloc(1, CMSG_SPACE(sizeof(int)));
    mh->msg_iov = siov;
    mh->msg_iovlen = 2;
    mh->msg_control = control;
    mh->msg_controllen = CMSG_SPACE(sizeof(int));
    struct cmsghdr *cm = CMSG_FIRSTHDR(mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &gate[1], sizeof(int));
    long sent = sendmsg(sv[0], mh, 0);

    char *in1 = malloc(700), *in2 = malloc(800);
    siov[0] = (struct iovec){in1, 700};
    siov[1] = (struct iovec){in2, 800};
    memset(control, 0, CMSG_SPACE(sizeof(int)));
    mh->msg_controllen = CMSG_SPACE(sizeof(int)) + 64; /* the kernel says how much it used */
    control = realloc(control, CMSG_SPACE(sizeof(int)) + 64);
    mh->msg_control = control;
    long received = recvmsg(sv[1], mh, 0);
    int passed = -1;
    cm = CMSG_FIRSTHDR(mh);
    if (cm && cm->cmsg_type == SCM_RIGHTS) memcpy(&passed, CMSG_DATA(cm), sizeof(int));
    int intact = memcmp(in1, msg, 700) == 0 && memcmp(in2, msg + 700, 300) == 0 && memcmp(in2 + 300, data_out, 500) == 0;
    printf("sendmsg %ld recvmsg %ld intact %d controllen %zu flags %d fd passed %d\n", sent, received, intact,
           (size_t)mh->msg_controllen, mh->msg_flags, passed >= 0 && passed != gate[1]);

    char *local = malloc(100);
    struct iovec *liov = malloc(sizeof *liov), *riov = malloc(sizeof *riov);
    *liov = (struct iovec){local, 100};
    *riov = (struct iovec){data_out, 100};
    long copied = process_vm_readv(getpid(), liov, 1, riov, 1, 0);
    printf("process_vm_readv %ld same %d\n", copied, memcmp(local, data_out, 100) == 0);

    /* the second thread ends only now: every call above ran with it alive */
    if (write(passed >= 0 ? passed : gate[1], "x", 1) != 1) return 1;
    pthread_join(t, NULL);
    printf("at out0 %p\nat out1 %p\nat out2 %p\nat bss_in %p\nat heap_in %p\nat msg %p\nat data_out %p\n"
           "at in1 %p\nat in2 %p\nat local %p\n", (void *)out[0], (void *)out[1], (void *)out[2], (void *)bss_in,
           (void *)heap_in, (void *)msg, (void *)data_out, (void *)in1, (void *)in2, (void *)local);
    return 0;
}
