/*
 * rt_file.c: the .mtr file of libmemtrace-rt.so: header, chunks with their CRCs, the end record, fork
 * (docs/compiled-in.md, "The .mtr file"; rt_writer.h lists the writer's parts: the queue, the chunk plan and
 * the codecs are rt_queue.c, rt_plan.c and rt_codec.c). The output reads:
 *
 *     header (64 bytes)  CHNK tid order stored raw codec crcs payload  CHNK ...  EEND crc chunks records dropped
 *
 * (include/mt_file.h lays the records out: version 2, every header and payload with its CRC32C, rt_crc.c).
 * A write that fails (a full disk, a file size limit) is said once on stderr; nothing more is written, so
 * the file ends without its end record and readers say it is incomplete.
 *
 * The end record closes a file whose every buffer was written: at exit, before an exec, and after a
 * fatal signal the runtime caught. A file killed by SIGKILL just stops after its last whole chunk (or in
 * the middle of one being written).
 *
 * What it gets wrong: at exit (and on a fatal signal) the buffers of the other threads are written while
 * those threads run on, so what they store after that moment is lost; a buffer another thread fills in
 * the middle of the final flush is dropped.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>

#include "rt_writer.h"

struct rt_writer wr;
#ifdef RT_PROFILE
uint64_t prof_ns[5];
#endif

/* ---- chunks --------------------------------------------------------------------------------------- */

/* The first failed write of the trace: one line on stderr, and nothing more is written. A write past the */
/* file size limit (EFBIG) also sent the writing thread SIGXFSZ, whose default ends the program: every    */
/* write of the trace runs with signals blocked (the writer thread, the final flush, open_out), so the    */
/* signal is still pending here, and is taken back: the limit cuts the trace, not the program.            */
static void write_failed(long error)
{
    if (error == -27) {
        uint64_t xfsz = 1ULL << (SIGXFSZ - 1);
        struct timespec zero = {0, 0};
        while (mt_sys4(SYS_rt_sigtimedwait, &xfsz, 0, &zero, 8) == SIGXFSZ) {}
    }
    if (wr.broken) return;
    wr.broken = 1;
    char msg[4300];
    size_t at = 0;
    const char *parts[] = {"memtrace: cannot write the trace ", wr.path ? wr.path : "", ": ",
                           error == -28 ? "no space left on device" : error == -27 ? "file too large"
                           : error == -5 ? "input/output error" : error == -122 ? "disk quota exceeded" : "write failed",
                           "; it stops here and is incomplete (the program runs on)\n"};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        for (const char *c = parts[i]; *c && at < sizeof msg; c++) msg[at++] = *c;
    mt_sys3(SYS_write, 2, msg, at);
}

static int write_all(const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        if (wr.broken) return 0;
        int fd = rt_fd_get();
        if (fd < 0) {
            write_failed(-9 /* EBADF */);
            return 0;
        }
        long w = mt_sys3(SYS_write, fd, c, n);
        if (w == -4) continue; /* EINTR */
        if (w <= 0) {
            write_failed(w ? w : -28);
            return 0;
        }
        c += w;
        n -= (size_t)w;
    }
    return 1;
}

/* The encoder's chunks at the end of the file; one appender at a time (tickets, or the final flush alone). */
void wr_append(struct encoder *x, uint32_t tid)
{
    for (int i = 0; i < x->npieces; i++) {
        struct piece *pc = &x->piece[i];
        __atomic_add_fetch(&wr.records, pc->records, __ATOMIC_RELAXED);
        __atomic_add_fetch(&wr.dropped, pc->dropped, __ATOMIC_RELAXED);
        if (!pc->raw) continue;
        if (wr.broken) continue;
        struct mtr_chunk_header h = {MTR_CHUNK_MAGIC, tid, wr.chunks++, (uint32_t)pc->stored, (uint32_t)pc->raw, (uint32_t)wr.codec,
                                     rt_crc32c(0, pc->payload, pc->stored), 0, 0};
        h.header_crc = rt_crc32c(0, &h, offsetof(struct mtr_chunk_header, header_crc));
        MT_DEBUG_ONLY(rt_check_chunk(&h, pc->payload, wr.codec));
        static const char zeros[8];
        struct iovec iov[3] = {{&h, sizeof h}, {(void *)pc->payload, pc->stored}, {(void *)zeros, (8 - pc->stored % 8) % 8}};
        size_t total = iov[0].iov_len + iov[1].iov_len + iov[2].iov_len;
        PROF_START;
        rt_fd_hold(); /* a dup2 onto the trace's number waits for the write */
        int fd = rt_fd_get();
        long w = fd < 0 ? -9 /* EBADF */ : mt_sys3(SYS_writev, fd, iov, 3);
        while (w == -4) w = mt_sys3(SYS_writev, fd, iov, 3); /* EINTR: nothing was written */
        rt_fd_release();
        PROF_END(3);
        if (w < 0) write_failed(w);
        else if ((size_t)w < total) { /* a short write: finish it byte-exactly */
            size_t done = (size_t)w;
            for (int k = 0; k < 3; k++) {
                if (done >= iov[k].iov_len) { done -= iov[k].iov_len; continue; }
                write_all((const char *)iov[k].iov_base + done, iov[k].iov_len - done);
                done = 0;
            }
        }
    }
    x->npieces = 0;
}

static void write_header(int pid)
{
    struct mtr_header h;
    rt_memzero(&h, sizeof h);
    rt_memcpy(h.magic, MTR_MAGIC, 8);
    h.version = MTR_VERSION;
    h.header_size = sizeof h;
    h.pid = (uint64_t)pid;
    h.page_size = (uint64_t)rt.page;
    h.crc = rt_crc32c(0, &h, offsetof(struct mtr_header, crc));
    write_all(&h, sizeof h);
}

/* Whether the regular file open on `fd` (write-only) starts with a trace's magic: read through a second */
/* descriptor of the same file (same device and inode), since the first one cannot read.                 */
static int holds_trace(const char *path, int fd)
{
    struct stat st, again;
    int rd = (int)mt_sys4(SYS_openat, AT_FDCWD, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0);
    if (rd < 0) return 0;
    char magic[8];
    int yes = mt_sys2(SYS_fstat, fd, (long)&st) == 0 && mt_sys2(SYS_fstat, rd, (long)&again) == 0 &&
              st.st_dev == again.st_dev && st.st_ino == again.st_ino &&
              mt_sys4(SYS_pread64, rd, (long)magic, 8, 0) == 8 && rt_strncmp(magic, MTR_MAGIC, 8) == 0;
    mt_sys1(SYS_close, rd);
    return yes;
}

/* The trace's own name (MEMTRACE_OUT): a new file, or an existing one that is empty, holds a trace (an     */
/* earlier run's, replaced), or is not a regular file (/dev/null, a FIFO: written as it is). Any other file */
/* is someone's data, perhaps the program's input: it is left alone and -EEXIST returned.                   */
static int open_named(const char *path)
{
    int fd = (int)mt_sys4(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd != -EEXIST) return fd;
    fd = (int)mt_sys4(SYS_openat, AT_FDCWD, path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0);
    if (fd < 0) return fd;
    struct stat st;
    if (mt_sys2(SYS_fstat, fd, (long)&st) != 0) return fd;
    if (!S_ISREG(st.st_mode)) {
        rt_file_not_regular = 1;
        return fd;
    }
    if (st.st_size > 0 && !holds_trace(path, fd)) {
        mt_sys1(SYS_close, fd);
        return -EEXIST;
    }
    mt_sys2(SYS_ftruncate, fd, 0);
    return fd;
}

/* Why rt_file_open failed, for its caller's message: an existing file that is not a trace was refused. */
int rt_file_refused_foreign;
/* The trace is a device or a FIFO (/dev/null): its fork children and descendants are not traced, since */
/* `<file>.<pid>` would be a new file beside it, /dev/null.1234 in /dev.                                */
int rt_file_not_regular;

/* Never through a symbolic link, and readable by the user alone. `fresh`: a fork child's file, a name */
/* made up next to the trace, must be new (O_EXCL): a leftover of an earlier process with this pid is   */
/* unlinked first (in a sticky directory only its owner can), anything planted there is never written. */
/* Not fresh: the user's name for the trace, never a file that holds something else (open_named).      */
static int open_out(const char *path, int pid, int fresh)
{
    int fd;
    if (fresh) {
        int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_EXCL;
        fd = (int)mt_sys4(SYS_openat, AT_FDCWD, path, flags, 0600);
        if (fd == -EEXIST && mt_sys1(SYS_unlink, path) == 0) fd = (int)mt_sys4(SYS_openat, AT_FDCWD, path, flags, 0600);
    } else {
        fd = open_named(path);
        rt_file_refused_foreign = fd == -EEXIST;
    }
    if (fd < 0) return 0;
    /* Out of the program's way, and found again if the program closes it or takes its number (rt_fd.c). */
    rt_fd_adopt(fd, path);
    wr.path = path;
    wr.broken = 0;
    wr.chunks = wr.records = wr.dropped = 0;
    uint64_t old = rt_block_signals(); /* a size limit's SIGXFSZ is taken back by write_failed */
    write_header(pid);
    rt_restore_signals(old);
    return 1;
}

int rt_file_open(const char *path, int pid, int codec)
{
    wr.codec = codec;
    if (codec < 0 || codec > 11) codec = wr.codec = 10;
    rt_crc_init();
    if (!wr_codec_init(codec)) return 0;
    if (!open_out(path, pid, 0)) return 0;
    uint64_t old = rt_block_signals();
    wr_start_writer();
    rt_restore_signals(old);
    return 1;
}

/* ---- the end -------------------------------------------------------------------------------------- */

void rt_finish(int how, uint64_t value, uint64_t ip, uint64_t addr, const char *path)
{
    if (rt.state != RT_RUNNING || rt_in_vfork_child()) return; /* a vfork child's exec or _exit: the trace is its parent's */
    size_t n = path ? rt_strlen(path) : 0;
    if (n > 1024) n = 1024;
    struct {
        struct mt_exit e;
        char path[1024 + 8];
    } r;
    rt_memzero(&r, sizeof r);
    r.e.h.type = MT_EXIT;
    r.e.h.flags = (uint8_t)how;
    r.e.h.tid = (uint32_t)rt_tid();
    r.e.value = value;
    r.e.ip = ip;
    r.e.addr = addr;
    r.e.path_len = (uint32_t)n;
    if (n) rt_memcpy(r.path, path, n);
    size_t len = (sizeof r.e + n + 7) & ~(size_t)7;
    r.e.h.size = (uint16_t)len;
    if (rt.to_file) { /* what the writer cost the program in waiting, before the exit record (its thread's last) */
        RT_REC(MT_WRITER, struct mt_writer, w);
        w.wait_ns = __atomic_load_n(&wr.wait_ns, __ATOMIC_RELAXED);
        w.waits = __atomic_load_n(&wr.waits, __ATOMIC_RELAXED);
        w.buffers = __atomic_load_n(&wr.buffers, __ATOMIC_RELAXED);
        w.own_ns = __atomic_load_n(&wr.own_ns, __ATOMIC_RELAXED);
        w.own = __atomic_load_n(&wr.own, __ATOMIC_RELAXED);
        if (!wr.writer_running) w.h.flags = MT_WRITER_NONE;
        rt_emit(&w, sizeof w);
    }
    rw_trap_report(); /* rewrite mode's int3 fallback: its traps and their accesses */
    rt_emit(&r, len);
    /* One thread finishes (two threads may crash at once, or one exits while another crashes). */
    int running = RT_RUNNING;
    if (!__atomic_compare_exchange_n(&rt.state, &running, rt.to_file ? RT_FINISHING : RT_FINISHED, 0,
                                     __ATOMIC_ACQ_REL, __ATOMIC_RELAXED) || !rt.to_file)
        return;
    rt.finisher = rt_tid();
    uint64_t old = rt_block_signals();
    /* Threads in the middle of handing over a buffer finish doing so (a thread stopped there for good */
    /* costs one second, then its buffer is written as it stands).                                     */
    for (int i = 0; i < 1000 && __atomic_load_n(&rt.swapping, __ATOMIC_SEQ_CST) != 0; i++) {
        struct timespec ms = {0, 1000 * 1000};
        mt_sys2(SYS_nanosleep, &ms, 0);
    }
    /* No ticket is handed out from now on (take_ticket sees the state under the queue lock); chunks being */
    /* encoded reach the file first (a thread stopped for good in the middle costs one second).          */
    rt_lock_take(&wr.queue_lock);
    rt_lock_drop(&wr.queue_lock);
    for (int i = 0; i < 1000 && __atomic_load_n(&wr.appended, __ATOMIC_ACQUIRE) != wr.next_ticket; i++) {
        struct timespec ms = {0, 1000 * 1000};
        mt_sys2(SYS_nanosleep, &ms, 0);
    }
    int saved = rt_self.internal;
    rt_self.internal = 1;
    rt_lock_take(&wr.file_lock);
    for (struct rt_buf *b; (b = wr_dequeue());) wr_write_queued(b);
    for (int i = 0; i < RT_MAX_THREADS; i++) {
        struct rt_thread_slot *t = &rt.threads[i];
        if (!t->tid || !t->buf) continue;
        struct rt_buf *b = t->buf;
        char *upto = __atomic_load_n(t->cursor, __ATOMIC_ACQUIRE);
        if (upto < b->base || upto > b->end) continue; /* mid-swap: nothing consistent to write */
        /* The live buffer finishes its thread's pending chunk and is written whole, as a last buffer. */
        b->used = upto;
        b->events_only = !rt.recording;
        b->last = 1;
        wr_plan(b);
        wr_encode_buffer(&wr_enc[0], b, 0);
        wr_append(&wr_enc[0], b->tid);
        b->last = 0;
        b->from = upto;
    }
    for (int i = 0; i < RT_MAX_THREADS; i++) { /* threads whose live buffer could not be read */
        struct rt_buf *p = wr_plan_forget(i);
        if (p) {
            wr_enc[0].npieces = 0;
            wr_enc[0].packed_used = 0;
            wr_encode_piece(&wr_enc[0], p->tail, p->used, 0, 0, p->events_only, 1);
            wr_append(&wr_enc[0], p->tid);
            wr_release(p);
        }
    }
    int fd = rt_fd_get();
    wr.end_offset = fd < 0 ? -1 : mt_sys3(SYS_lseek, fd, 0, 1 /* SEEK_CUR */);
    struct mtr_end_record e = {MTR_END_MAGIC, 0, wr.chunks, wr.records, wr.dropped};
    e.crc = rt_crc32c(0, &e.chunks, sizeof e - offsetof(struct mtr_end_record, chunks));
    write_all(&e, sizeof e);
#ifdef RT_PROFILE
    {
        char m[200];
        size_t at = 0;
        const char *names[] = {"memtrace profile: plan ", " ms, pack ", " ms, zstd ", " ms, write ", " ms, packed MB "};
        for (int i = 0; i < 5; i++) {
            for (const char *c = names[i]; *c; c++) m[at++] = *c;
            uint64_t v = prof_ns[i] / 1000000, d = 1;
            while (v / d >= 10) d *= 10;
            for (; d; d /= 10) m[at++] = (char)('0' + v / d % 10);
        }
        for (const char *c = " ms\n"; *c; c++) m[at++] = *c;
        mt_sys3(SYS_write, 2, m, at);
    }
#endif
    rt.state = RT_FINISHED;
    rt_lock_drop(&wr.file_lock);
    rt_self.internal = saved;
    rt_restore_signals(old);
}

void rt_count_dropped(uint64_t n) { __atomic_add_fetch(&wr.dropped, n, __ATOMIC_RELAXED); }

void rt_unfinish(void)
{
    if (rt.state != RT_FINISHED) return;
    int fd = rt.to_file && wr.end_offset > 0 ? rt_fd_get() : -1;
    if (fd >= 0) {
        mt_sys2(SYS_ftruncate, fd, wr.end_offset);
        mt_sys3(SYS_lseek, fd, wr.end_offset, 0 /* SEEK_SET */);
    }
    rt.state = RT_RUNNING;
}

/* ---- fork ----------------------------------------------------------------------------------------- */

void rt_file_fork_prepare(void)
{
    if (!rt.to_file) return;
    rt_lock_take(&wr.file_lock);
    rt_lock_take(&wr.queue_lock);
}

void rt_file_fork_parent(void)
{
    if (!rt.to_file) return;
    rt_lock_drop(&wr.queue_lock);
    rt_lock_drop(&wr.file_lock);
}

/* The child's copies of queued buffers hold the parent's slots: they go back to the pool. */
void rt_file_fork_child(const char *path, int pid)
{
    if (!rt.to_file) return;
    wr.queue_lock.owner = 0;
    wr.file_lock.owner = 0;
    for (struct rt_buf *b; (b = wr_dequeue());) rt_buf_put(b);
    rt_fd_drop();
    wr.writer_running = 0;
    if (rt_file_not_regular || !open_out(path, pid, 1)) {
        rt.to_file = 0;
        return;
    }
    wr.next_ticket = wr.appended = 0;
    wr.wait_ns = wr.waits = wr.buffers = wr.own_ns = wr.own = 0; /* the child's own waits */
    for (int i = 0; i < RT_MAX_THREADS; i++) { /* pending tails: the parent's slots */
        struct rt_buf *p = wr_plan_forget(i);
        if (p) rt_buf_put(p);
    }
    wr_codec_fork_child();
    wr_start_writer();
}
