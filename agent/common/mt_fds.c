/*
 * mt_fds.c (shared by the agent and the runtime): gives the program the descriptors memtrace itself was
 * started with (docs/trust.md, "Descriptors"). The JVM cannot: its ProcessBuilder closes every descriptor
 * above 2 in the child. So the launcher lists them (MEMTRACE_INHERITED_FDS), the JVM keeps them open and,
 * once the program is started, passes them by SCM_RIGHTS on a SOCK_SEQPACKET socket in a directory of
 * its own (0700) named by MEMTRACE_FDS; the constructor calls mt_inherit_fds first thing, before it opens
 * anything of its own, and each descriptor goes back to its original number.
 *
 * Output: none. Each message is n target numbers (ints) with n descriptors attached, until the JVM closes
 * the connection. The received descriptors are the same open file descriptions (offsets, pipe ends,
 * sockets), not files opened again. The variable is taken out of the environment by the caller's scrub.
 *
 * mt_dup_high: a descriptor of memtrace's own (the runtime's trace file, the check runtime's copy of stderr)
 * moved out of the way of a program that opens files lowest-first.
 *
 * What it gets wrong: a program that never loads the agent or runtime (a static one) gets none of them;
 * the numbers get no close-on-exec flag, as an inherited descriptor never has one. Raw system calls
 * throughout: the runtime wraps close and dup2.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "mt_common.h"

#define MT_FDS_PER_MESSAGE 64

void mt_inherit_fds(const char *path)
{
    if (!path || !*path) return;
    struct sockaddr_un addr;
    size_t len = mt_strlen(path);
    if (len >= sizeof addr.sun_path) return;
    mt_memzero(&addr, sizeof addr);
    addr.sun_family = AF_UNIX;
    mt_memcpy(addr.sun_path, path, len);
    int s = (int)mt_sys3(SYS_socket, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (s < 0) return;
    if (mt_failed(mt_sys3(SYS_connect, s, (long)&addr, sizeof addr))) {
        mt_sys1(SYS_close, s);
        return;
    }
    for (;;) {
        int targets[MT_FDS_PER_MESSAGE];
        union {
            char buf[CMSG_SPACE(sizeof(int) * MT_FDS_PER_MESSAGE)];
            struct cmsghdr align;
        } control;
        struct iovec iov = {targets, sizeof targets};
        struct msghdr msg;
        mt_memzero(&msg, sizeof msg);
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.buf;
        msg.msg_controllen = sizeof control.buf;
        long n;
        do n = mt_sys3(SYS_recvmsg, s, (long)&msg, MSG_CMSG_CLOEXEC);
        while (n == -EINTR);
        if (n <= 0) break;
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) break;
        int count = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        int got[MT_FDS_PER_MESSAGE];
        mt_memcpy(got, CMSG_DATA(c), sizeof(int) * (size_t)count);
        int wanted = (int)(n / (long)sizeof(int)), top = 2;
        for (int i = 0; i < wanted && i < count; i++)
            if (targets[i] > top) top = targets[i];
        /* The socket and every received descriptor (the kernel put them on the lowest free numbers, which
         * may be targets) first go above the highest target, then each descriptor onto its number. */
        if (s <= top) {
            int h = (int)mt_sys3(SYS_fcntl, s, F_DUPFD_CLOEXEC, top + 1);
            if (h < 0) {
                for (int i = 0; i < count; i++) mt_sys1(SYS_close, got[i]);
                break;
            }
            mt_sys1(SYS_close, s);
            s = h;
        }
        for (int i = 0; i < count; i++) {
            int h = (int)mt_sys3(SYS_fcntl, got[i], F_DUPFD_CLOEXEC, top + 1);
            if (h >= 0) {
                mt_sys1(SYS_close, got[i]);
                got[i] = h;
            }
        }
        for (int i = 0; i < count; i++) {
            if (i < wanted && targets[i] > 2 && got[i] > top) mt_sys2(SYS_dup2, got[i], targets[i]);
            mt_sys1(SYS_close, got[i]);
        }
    }
    mt_sys1(SYS_close, s);
}

int mt_dup_high(int fd)
{
    struct rlimit r;
    long top = 1024;
    if (mt_sys4(SYS_prlimit64, 0, RLIMIT_NOFILE, 0, (long)&r) == 0 && r.rlim_cur < (rlim_t)top) top = (long)r.rlim_cur;
    /* F_DUPFD takes the lowest free number at or above its argument: from the top down until one is free */
    for (long at = top - 1; at > fd && at >= top - 64; at--) {
        long high = mt_sys3(SYS_fcntl, fd, F_DUPFD_CLOEXEC, at);
        if (high >= 0) return (int)high;
    }
    return -1;
}
