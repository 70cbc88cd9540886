/* sendmmsg and recvmmsg with a second thread alive: three datagrams sent in one sendmmsg on a datagram
 * socketpair (the mmsghdr array, the iovec arrays and all but one buffer in the heap, one buffer in .data,
 * a descriptor passed with SCM_RIGHTS in a heap control buffer), then received in one recvmmsg into heap
 * buffers (the array in the heap too, with a .bss buffer and a name buffer for the last message, and a
 * timeout in the heap that the kernel reads and writes back). Then
 * the same with more pieces than the agent redirects in one call (MMSG_IOVS): 5 messages of 1,000 one-byte
 * iovecs each. Under memtrace none of the first two may open a page (windows at risk 0), and each call
 * must do what it does untraced, msg_len of every message included.
 *
 * Prints one line per call, "NAME RESULT", the msg_len of each message and what came back, then one line
 * "at NAME 0xADDRESS" per buffer, for the test to find the block events of each call at those addresses. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

char data_out[300];
char bss_in[400];
static int gate[2];

static void *waiter(void *arg)
{
    char c;
    (void)arg;
    return read(gate[0], &c, 1) == 1 ? NULL : (void *)1;
}

int main(void)
{
    if (pipe(gate)) return 1;
    pthread_t t;
    pthread_create(&t, NULL, waiter, NULL);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv)) return 1;

    size_t len[3] = {1000, 2000, 300};
    char *out[3];
    for (int i = 0; i < 2; i++) {
        out[i] = malloc(len[i]);
        for (size_t k = 0; k < len[i]; k++) out[i][k] = (char)('a' + (k + i) % 26);
    }
    out[2] = data_out;
    memset(data_out, 'z', sizeof data_out);
    struct mmsghdr *sendv = calloc(3, sizeof *sendv);
    struct iovec *siov = malloc(4 * sizeof *siov);
    siov[0] = (struct iovec){out[0], 400};       /* message 0: two pieces of out0 */
    siov[1] = (struct iovec){out[0] + 400, 600};
    siov[2] = (struct iovec){out[1], len[1]};    /* message 1: out1 */
    siov[3] = (struct iovec){out[2], len[2]};    /* message 2: data_out */
    sendv[0].msg_hdr.msg_iov = &siov[0];
    sendv[0].msg_hdr.msg_iovlen = 2;
    sendv[1].msg_hdr.msg_iov = &siov[2];
    sendv[1].msg_hdr.msg_iovlen = 1;
    sendv[2].msg_hdr.msg_iov = &siov[3];
    sendv[2].msg_hdr.msg_iovlen = 1;
    char *control = calloc(1, CMSG_SPACE(sizeof(int)));
    sendv[1].msg_hdr.msg_control = control;
    sendv[1].msg_hdr.msg_controllen = CMSG_SPACE(sizeof(int));
    struct cmsghdr *cm = CMSG_FIRSTHDR(&sendv[1].msg_hdr);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &gate[1], sizeof(int));
    int sent = sendmmsg(sv[0], sendv, 3, 0);
    printf("sendmmsg %d msg_len %u %u %u\n", sent, sendv[0].msg_len, sendv[1].msg_len, sendv[2].msg_len);

    struct mmsghdr *recvv = calloc(3, sizeof *recvv);
    struct iovec *riov = malloc(3 * sizeof *riov);
    char *in0 = malloc(1000), *in1 = malloc(2500);
    riov[0] = (struct iovec){in0, 1000};
    riov[1] = (struct iovec){in1, 2500};
    riov[2] = (struct iovec){bss_in, sizeof bss_in};
    char *rcontrol = calloc(1, CMSG_SPACE(sizeof(int)) + 64);
    struct sockaddr_storage *name = calloc(1, sizeof *name);
    for (int i = 0; i < 3; i++) {
        recvv[i].msg_hdr.msg_iov = &riov[i];
        recvv[i].msg_hdr.msg_iovlen = 1;
    }
    recvv[1].msg_hdr.msg_control = rcontrol;
    recvv[1].msg_hdr.msg_controllen = CMSG_SPACE(sizeof(int)) + 64; /* the kernel says how much it used */
    recvv[2].msg_hdr.msg_name = name;
    recvv[2].msg_hdr.msg_namelen = sizeof *name;
    struct timespec *timeout = malloc(sizeof *timeout); /* the kernel reads it and writes back what is left */
    *timeout = (struct timespec){5, 0};
    int received = recvmmsg(sv[1], recvv, 3, 0, timeout);
    int passed = -1;
    cm = CMSG_FIRSTHDR(&recvv[1].msg_hdr);
    if (cm && cm->cmsg_type == SCM_RIGHTS) memcpy(&passed, CMSG_DATA(cm), sizeof(int));
    int intact = memcmp(in0, out[0], 1000) == 0 && memcmp(in1, out[1], 2000) == 0 && memcmp(bss_in, data_out, 300) == 0;
    printf("recvmmsg %d msg_len %u %u %u intact %d controllen %zu namelen %u fd passed %d timeout left %d\n", received,
           recvv[0].msg_len, recvv[1].msg_len, recvv[2].msg_len, intact, (size_t)recvv[1].msg_hdr.msg_controllen,
           (unsigned)recvv[2].msg_hdr.msg_namelen, passed >= 0 && passed != gate[1],
           timeout->tv_sec >= 0 && timeout->tv_sec <= 5 && timeout->tv_nsec >= 0 && timeout->tv_nsec < 1000000000L);

    /* 5,000 pieces in one call: more than the agent redirects, still exact */
    enum { MSGS = 5, PIECES = 1000 };
    struct mmsghdr *many = calloc(MSGS, sizeof *many);
    struct iovec *piov = malloc(MSGS * PIECES * sizeof *piov);
    char *bytes = malloc(MSGS * PIECES);
    for (int i = 0; i < MSGS * PIECES; i++) {
        bytes[i] = (char)(i * 13);
        piov[i] = (struct iovec){&bytes[i], 1};
    }
    for (int m = 0; m < MSGS; m++) {
        many[m].msg_hdr.msg_iov = &piov[m * PIECES];
        many[m].msg_hdr.msg_iovlen = PIECES;
    }
    int sent_many = sendmmsg(sv[0], many, MSGS, 0);
    char *back = calloc(MSGS, PIECES);
    int ok = 1;
    for (int m = 0; m < MSGS; m++) {
        long n = recv(sv[1], back + m * PIECES, PIECES, 0);
        ok &= n == PIECES && many[m].msg_len == PIECES;
    }
    printf("sendmmsg %d of %d pieces same %d\n", sent_many, MSGS * PIECES, ok && memcmp(back, bytes, MSGS * PIECES) == 0);

    /* the second thread ends only now: every call above ran with it alive */
    if (write(passed >= 0 ? passed : gate[1], "x", 1) != 1) return 1;
    pthread_join(t, NULL);
    printf("at out0 %p\nat out1 %p\nat data_out %p\nat in0 %p\nat in1 %p\nat bss_in %p\nat bytes %p\n", (void *)out[0],
           (void *)out[1], (void *)data_out, (void *)in0, (void *)in1, (void *)bss_in, (void *)bytes);
    return 0;
}
