/*
 * memtrace agent, system calls: what the files of the SIGSYS handler share (syscall.c handles the call,
 * syscall_table.c says what its buffers are and records the kernel's transfers, syscall_vectors.c gives the
 * kernel alias copies of iovec arrays and msghdrs, syscall_signals.c emulates the signal calls,
 * syscall_map.c keeps the traced set true to the memory map). Internal to the agent: hidden like all of it.
 *
 * How it reads: each buffer a call may touch is a span of whole pages (struct spans) the handler opens for
 * the call, unless the kernel gets an alias address for it instead (struct redirected holds the copies).
 *
 * What it gets wrong: see syscall.c; the limits here (MAX_SPANS buffers, MMSG_IOVS iovecs a call) send a call
 * past them to the slow, exact path that opens all traced memory.
 */
#ifndef MEMTRACE_SYSCALL_H
#define MEMTRACE_SYSCALL_H

#include "agent.h"

#define MAX_SPANS 32
struct spans { int n; int all; uintptr_t s[MAX_SPANS], e[MAX_SPANS]; };

/* Adds one buffer; past MAX_SPANS the call falls back to opening all traced memory (`all`). */
void add_span(struct spans *sp, uintptr_t a, size_t len);

#define IOV_MAX_KERNEL 1024
#define IOV_ON_STACK 64
struct iov_copy {
    struct iovec *v;             /* the copy: `small` or a mapping of `cap` entries */
    int n, cap;
    struct iovec small[IOV_ON_STACK];
};

/* What a call's vectors became: the copies the kernel reads, and for a msghdr the copy it gets and   */
/* where the program's own lies (delta: its alias), to give back what recvmsg writes into it; for an   */
/* mmsghdr array the same, in one mapping that also holds every message's redirected iovecs.          */
#define MMSG_IOVS 4096           /* iovecs over all messages of one call, after splitting at pieces */
struct redirected {
    struct iov_copy iov[2];
    int niov;
    struct msghdr mh;
    uintptr_t mh_at;             /* 0: no msghdr */
    intptr_t mh_delta;
    struct mmsghdr *mm;          /* NULL: no mmsghdr array; else cnt copies, then MMSG_IOVS iovecs */
    long mm_n;
    size_t mm_bytes;
    uintptr_t mm_at;
    intptr_t mm_delta;
};

void iov_release(struct iov_copy *c);
int iov_redirect(struct iov_copy *c, uintptr_t at, long cnt, int need, int translate);
void redirected_release(struct redirected *rd);
int msghdr_redirect(struct redirected *rd, uintptr_t at, int need);
int mmsg_redirect(struct redirected *rd, uintptr_t at, long cnt, int need);
void msghdr_give_back(const struct msghdr *mh, uintptr_t p);
void mmsg_give_back(const struct redirected *rd, long nr, long done);

/* syscall_table.c */
void describe_syscall(long nr, const long *a, struct spans *sp, long *k, struct redirected *rd);
void record_syscall(long nr, const long *a, uintptr_t ip, long ret);

/* syscall_signals.c */
void handle_sigaction(long *a, long *ret);
long program_sigprocmask(const long *a, ucontext_t *uc);
long program_sigaltstack(const long *a, ucontext_t *uc);
void note_fatal_self_signal(long nr, const long *a, ucontext_t *uc);

/* syscall_map.c */
void follow_memory_map(long nr, const long *a, long ret, uintptr_t brk_before);

#endif
