/*
 * memtrace agent, redirected vectors: an iovec array (readv, writev, preadv*, pwritev*, process_vm_*), a
 * msghdr (sendmsg, recvmsg) and an mmsghdr array (sendmmsg, recvmmsg) whose buffers lie in moved memory
 * (traced.c) are copied into agent memory with each buffer given as its alias address, split where it
 * crosses from one moved piece into the next or into untraced memory; the kernel gets the copy, so nothing
 * is opened, and fills and drains the pieces in order, exactly as it would the program's buffers. What the
 * call writes into the copies (recvmsg's lengths and flags, each message's msg_len) is given back.
 *
 * How its output reads: it writes no record; syscall_table.c records the transfers from the program's own
 * arrays after the call.
 *
 * What it gets wrong: a buffer in traced memory that is not moved (a file mapping), or an array split into
 * more than IOV_MAX pieces (more than MMSG_IOVS over all of an mmsghdr array's messages), is opened instead
 * (the caller falls back); the remote side of process_vm_* on this process itself is reached through the
 * alias but not recorded.
 */
#include "syscall.h"

void iov_release(struct iov_copy *c)
{
    if (c->v && c->v != c->small) mt_unmap_pages(c->v, sizeof(struct iovec) * (size_t)c->cap);
    c->v = NULL;
}

static int iov_append(struct iov_copy *c, uintptr_t base, size_t len)
{
    if (c->n == IOV_MAX_KERNEL) return 0; /* split past the kernel's limit: the caller opens instead */
    if (c->n == c->cap) {
        struct iovec *t = agent_map(sizeof(struct iovec) * IOV_MAX_KERNEL);
        if (!t) return 0;
        mt_memcpy(t, c->v, sizeof(struct iovec) * (size_t)c->n);
        c->v = t;
        c->cap = IOV_MAX_KERNEL;
    }
    c->v[c->n++] = (struct iovec){(void *)base, len};
    return 1;
}

/* Whether the program may use memory at `a`, reached with `delta` (0: untraced, as it is), the way a   */
/* buffer is used (`need`): the kernel must see the program's own view otherwise, to fail as it would.  */
/* Lock held.                                                                                          */
static int may_use_locked(uintptr_t a, intptr_t delta, int need)
{
    if (!delta) return 1;
    struct range *r = set_find(a);
    return r && (r->prot & need) == need;
}

/* One buffer of `len` bytes at `a` as pieces the kernel reaches without opening anything: moved memory */
/* the program may use that way (`need`) through its alias, untraced memory as it is. 0 when some of it */
/* is traced but not moved, or moved without the program's right to it (the kernel must see the       */
/* program's view then, to fail as it would untraced).                                                 */
static int iov_redirect_one(struct iov_copy *c, uintptr_t a, size_t len, int need)
{
    uintptr_t e = a + len < a ? UINTPTR_MAX : a + len;
    while (a < e) {
        intptr_t delta;
        spin_lock(&g.lock);
        size_t piece = reach_stretch_locked(a, e, &delta);
        int allowed = piece && may_use_locked(a, delta, need);
        spin_unlock(&g.lock);
        if (!allowed || !iov_append(c, a + (uintptr_t)delta, piece)) return 0;
        a += piece;
    }
    return 1;
}

/* The program's iovec array at `at` (`cnt` entries) as a redirected copy in *c; `translate` 0 keeps the */
/* buffers' addresses (another process's). 0 when it cannot be (the caller opens the buffers instead);  */
/* an array the kernel refuses anyway (a count out of range) is left to the kernel, untouched (-1).     */
int iov_redirect(struct iov_copy *c, uintptr_t at, long cnt, int need, int translate)
{
    c->v = c->small;
    c->n = 0;
    c->cap = IOV_ON_STACK;
    if (cnt < 0 || cnt > IOV_MAX_KERNEL) return -1;
    struct iovec in[IOV_ON_STACK];
    for (long done = 0; done < cnt; done += IOV_ON_STACK) {
        int k = cnt - done > IOV_ON_STACK ? IOV_ON_STACK : (int)(cnt - done);
        if (copy_in(in, at + sizeof(struct iovec) * (size_t)done, sizeof(struct iovec) * (size_t)k)) return -1;
        for (int i = 0; i < k; i++) {
            int ok = !translate || !in[i].iov_len
                ? iov_append(c, (uintptr_t)in[i].iov_base, in[i].iov_len)
                : iov_redirect_one(c, (uintptr_t)in[i].iov_base, in[i].iov_len, need);
            if (!ok) { iov_release(c); return 0; }
        }
    }
    return 1;
}

void redirected_release(struct redirected *rd)
{
    for (int i = 0; i < rd->niov; i++) iov_release(&rd->iov[i]);
    rd->niov = 0;
    if (rd->mm) mt_unmap_pages((void *)rd->mm, (size_t)rd->mm_bytes);
    rd->mm = NULL;
}

/* A plain buffer of the msghdr (name, control) through its alias, or as it is when untraced; 0 when */
/* it would have to be opened.                                                                         */
static int reach_plain(uintptr_t *a, size_t len, int need)
{
    if (!*a || !len) return 1;
    intptr_t delta;
    spin_lock(&g.lock);
    int allowed = reach_without_opening(*a, *a + len, &delta) && may_use_locked(*a, delta, need);
    spin_unlock(&g.lock);
    if (allowed) *a += (uintptr_t)delta;
    return allowed;
}

/* The msghdr at `at` redirected: its copy in rd->mh with the iovecs, name and control buffers as alias */
/* addresses. 0 when some part would need opening.                                                      */
int msghdr_redirect(struct redirected *rd, uintptr_t at, int need)
{
    intptr_t delta;
    spin_lock(&g.lock);
    int reach = reach_without_opening(at, at + sizeof rd->mh, &delta);
    spin_unlock(&g.lock);
    if (!reach || copy_in(&rd->mh, at, sizeof rd->mh)) return 0;
    uintptr_t name = (uintptr_t)rd->mh.msg_name, control = (uintptr_t)rd->mh.msg_control;
    if (!reach_plain(&name, rd->mh.msg_namelen, need) || !reach_plain(&control, rd->mh.msg_controllen, need)) return 0;
    struct iov_copy *c = &rd->iov[rd->niov];
    if (iov_redirect(c, (uintptr_t)rd->mh.msg_iov, (long)rd->mh.msg_iovlen, need, 1) != 1) return 0;
    rd->niov++;
    rd->mh.msg_name = (void *)name;
    rd->mh.msg_control = (void *)control;
    rd->mh.msg_iov = c->v;
    rd->mh.msg_iovlen = (size_t)c->n;
    rd->mh_at = at;
    rd->mh_delta = delta;
    return 1;
}

/* The mmsghdr array at `at` (`cnt` messages) redirected: copied with each msghdr's iovecs, name and   */
/* control buffers as alias addresses. 0 when some part would need opening or exceeds the copy's room;  */
/* -1 for an array the kernel handles without touching a buffer (no messages).                          */
int mmsg_redirect(struct redirected *rd, uintptr_t at, long cnt, int need)
{
    if (!cnt) return -1;
    size_t array = sizeof(struct mmsghdr) * (size_t)cnt;
    intptr_t delta;
    spin_lock(&g.lock);
    /* the kernel writes each message's msg_len: the program must have the right to that too */
    int reach = reach_without_opening(at, at + array, &delta) && may_use_locked(at, delta, PROT_READ | PROT_WRITE);
    spin_unlock(&g.lock);
    if (!reach) return 0;
    size_t bytes = page_up(array + sizeof(struct iovec) * MMSG_IOVS);
    struct mmsghdr *mm = agent_map(bytes);
    if (!mm) return 0;
    rd->mm = mm;
    rd->mm_bytes = bytes;
    if (copy_in(mm, at, array)) return 0;
    struct iovec *pool = (struct iovec *)((char *)mm + array);
    int used = 0;
    for (long i = 0; i < cnt; i++) {
        struct msghdr *h = &mm[i].msg_hdr;
        uintptr_t name = (uintptr_t)h->msg_name, control = (uintptr_t)h->msg_control;
        if (!reach_plain(&name, h->msg_namelen, need) || !reach_plain(&control, h->msg_controllen, need)) return 0;
        struct iov_copy c;
        if (iov_redirect(&c, (uintptr_t)h->msg_iov, (long)h->msg_iovlen, need, 1) != 1) {
            iov_release(&c);
            return 0;
        }
        int fits = c.n <= MMSG_IOVS - used;
        if (fits) mt_memcpy(pool + used, c.v, sizeof(struct iovec) * (size_t)c.n);
        iov_release(&c);
        if (!fits) return 0;
        h->msg_name = (void *)name;
        h->msg_control = (void *)control;
        h->msg_iov = pool + used;
        h->msg_iovlen = (size_t)c.n;
        used += c.n;
    }
    rd->mm_n = cnt;
    rd->mm_at = at;
    rd->mm_delta = delta;
    return 1;
}

/* recvmsg wrote the lengths and flags into a msghdr copy: they go to the program's msghdr at `p`. */
void msghdr_give_back(const struct msghdr *mh, uintptr_t p)
{
    user_transfer((void *)&mh->msg_namelen, p + offsetof(struct msghdr, msg_namelen), sizeof mh->msg_namelen, 1);
    user_transfer((void *)&mh->msg_controllen, p + offsetof(struct msghdr, msg_controllen), sizeof mh->msg_controllen, 1);
    user_transfer((void *)&mh->msg_flags, p + offsetof(struct msghdr, msg_flags), sizeof mh->msg_flags, 1);
}

/* The call handled `done` messages: each one's msg_len, and for recvmmsg its msghdr's lengths and flags, */
/* go to the program's array (its alias).                                                                */
void mmsg_give_back(const struct redirected *rd, long nr, long done)
{
    for (long i = 0; i < done && i < rd->mm_n; i++) {
        uintptr_t p = rd->mm_at + (uintptr_t)rd->mm_delta + sizeof(struct mmsghdr) * (size_t)i;
        user_transfer((void *)&rd->mm[i].msg_len, p + offsetof(struct mmsghdr, msg_len), sizeof rd->mm[i].msg_len, 1);
        if (nr == SYS_recvmmsg) msghdr_give_back(&rd->mm[i].msg_hdr, p);
    }
}
