/*
 * rt_thread_start.c: a new thread's first buffer, handed to it through the runtime's TLS image; a TLS of its
 * own for a thread the program makes with clone.
 *
 * glibc blocks every signal across the clone of pthread_create and the new thread runs libc's start_thread
 * with them blocked until it restores the creator's mask. When libc is rewritten (memtrace run --mode
 * rewrite), start_thread's own memory instructions carry probes, and a probe that finds the thread's cursor
 * still null faults with SIGSEGV blocked: the kernel then kills the process instead of calling the
 * runtime's handler (rt_buffer.c, "the thread's first probe"). So the creator hands the thread a buffer
 * before it exists: under a lock, pthread_create's wrapper (rt_init.c) takes a free buffer and writes its
 * base into __memtrace_cursor's word of this library's TLS initialization image (.tdata), which glibc
 * copies into the new thread's TLS block while it allocates it (also for a cached stack), inside the
 * wrapped pthread_create; then it writes the null back. The thread's probes store into that buffer from
 * its first instruction on, and the thread adopts it when the wrapper's start routine runs (rt_buffer.c,
 * rt_thread_begin_in), so the accesses of start_thread come first in the thread's trace, before its
 * MT_THREAD start record.
 *
 * A thread the program makes with libc's clone wrapper, sharing its memory (CLONE_VM) but not given a TLS
 * (no CLONE_SETTLS, no CLONE_VFORK), would run on its creator's TLS: both threads' probes would write at one
 * cursor at once and corrupt the trace. The wrapper `clone` gives it a TLS block of its own instead: a copy
 * of the creator's static TLS and TCB (their sizes from ld.so's _dl_get_tls_static_info and libc's
 * _thread_db_sizeof_pthread) with the TCB's self pointers at the copy, its cursor at a buffer of its own
 * and the runtime's state a fresh thread's, passed with CLONE_SETTLS. The child records under its own tid
 * like a pthread (MT_THREAD start, parent its creator; exit with its function's value when it returns).
 * A clone without CLONE_VM is a process: it is made as fork is (rt_clone_process, rt_init.c).
 *
 * How it reads: nothing of its own; the thread's records are in its first buffer as always. A raw clone's
 * child is in the trace as a thread of its own. One line on stderr if glibc does not say where its static
 * TLS lies (the child then shares its creator's cursor, as before).
 *
 * What it gets wrong: a thread that libc makes without going through pthread_create's PLT entry (a
 * SIGEV_THREAD timer's helper, a posix_spawn) while another thread is inside the wrapper copies the same
 * image and writes into the same buffer: the two threads' first slots mix. Without the image (a program
 * built by memtrace cc defines __memtrace_cursor itself, so the runtime's copy is unused) nothing is
 * handed over and a thread starts as before, with a null cursor; that is right there, since nothing of
 * libc is instrumented then.
 * A raw clone's child sees a copy of its creator's TLS, not the creator's own: what one stores in a
 * variable it reaches through %fs (errno, an executable's or an initial-exec __thread variable) the other
 * no longer sees, where natively both are one (a child that reports back through errno or such a variable
 * would differ; the copy keeps the stack guard and pointer guard, so canaries and mangled pointers hold).
 * Variables reached through __tls_get_addr (a shared library's general-dynamic TLS) stay shared, as the
 * copy keeps the creator's dtv. Its blocks are reused once their child is gone, never unmapped. A child
 * that ends by an exit system call of its own, not by returning, records no MT_THREAD exit. A clone made
 * by a system call of the program's own (syscall(SYS_clone) or clone3, inline assembly) does not pass
 * through the wrapper: its child still shares its creator's cursor, and records of both may be lost or
 * mixed when they run at once (the reader reports a chunk it cannot decode).
 */
#include <errno.h>
#include <link.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/types.h>

#include "rt.h"

/* __memtrace_cursor's word in this library's TLS initialization image; NULL when there is none. */
static char **image_slot;
/* Whether that word lies in PT_GNU_RELRO (read-only once relocated): written through an mprotect. */
static int image_relro;
static int looked;
static rt_lock image_lock;

static int find_image(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    const ElfW(Phdr) *tls = NULL, *relro = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type == PT_TLS) tls = &info->dlpi_phdr[i];
        if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO) relro = &info->dlpi_phdr[i];
    }
    const char *data = info->dlpi_tls_data, *cursor = (const char *)&__memtrace_cursor;
    if (!tls || !data || cursor < data || cursor >= data + tls->p_memsz) return 0;
    size_t off = (size_t)(cursor - data);
    if (off + sizeof(char *) > tls->p_filesz) return 1; /* in .tbss: no image to write */
    uintptr_t at = info->dlpi_addr + tls->p_vaddr + off;
    image_slot = (char **)at;
    image_relro = relro && at >= info->dlpi_addr + relro->p_vaddr && at < info->dlpi_addr + relro->p_vaddr + relro->p_memsz;
    return 1;
}

static int write_image(char *value)
{
    uintptr_t page = (uintptr_t)image_slot & ~(uintptr_t)4095;
    if (image_relro && mt_sys3(SYS_mprotect, page, 4096, PROT_READ | PROT_WRITE) != 0) return -1;
    *image_slot = value;
    if (image_relro) mt_sys3(SYS_mprotect, page, 4096, PROT_READ);
    return 0;
}

struct rt_buf *rt_handover_begin(void)
{
    rt_lock_take(&image_lock);
    if (!looked) { /* under the lock: two first pthread_create calls at once look once */
        looked = 1;
        char *saved = rw_sink_enter(); /* the runtime's walk in rewritten libc: not the program's accesses */
        dl_iterate_phdr(find_image, NULL);
        rw_sink_leave(saved);
    }
    if (!image_slot) {
        rt_lock_drop(&image_lock);
        return NULL;
    }
    /* with or without a trace file: the probes run and need a buffer either way */
    uint64_t old = rt_block_signals();
    struct rt_buf *b = rt_buf_get();
    rt_restore_signals(old);
    if (write_image(b->base) != 0) {
        rt_buf_put(b);
        rt_lock_drop(&image_lock);
        return NULL;
    }
    return b;
}

void rt_handover_end(struct rt_buf *b, int created)
{
    if (!b) return;
    write_image(NULL);
    rt_lock_drop(&image_lock);
    if (!created) rt_buf_put(b);
}

/* ---- the program's clone ------------------------------------------------------------------------- */

/* glibc's static TLS of every thread: tls_below bytes below the thread pointer (the modules' blocks and   */
/* the surplus), tls_tcb from it up (struct pthread, whose words 0 and 2 point at itself), the thread     */
/* pointer aligned to tls_align. tls_known: 0 not looked yet, 1 known, -1 glibc does not say.             */
static size_t tls_below, tls_tcb, tls_align;
static int tls_known;

/* A child's TLS block: a mapping holding the copy, then this record past its TCB. Blocks are reused once  */
/* their child is gone (kill(tid, 0) fails with ESRCH), so a program making clones one after another keeps */
/* one; they are never unmapped.                                                                           */
struct clone_block {
    int (*fn)(void *);
    void *arg;
    uint64_t parent;
    struct rt_buf *buf;       /* the child's first buffer, its cursor in the copy points at its base */
    char *tp;                 /* the copy's thread pointer */
    volatile int tid;         /* the child's; 0: free, -1: being made */
    struct clone_block *next; /* every block made */
};
static struct clone_block *blocks;
static rt_lock blocks_lock;
static int (*real_clone)(int (*)(void *), void *, int, void *, ...);

static char *thread_pointer(void)
{
    char *tp;
    __asm__("mov %%fs:0, %0" : "=r"(tp));
    return tp;
}

static int tls_layout(void)
{
    if (tls_known) return tls_known > 0;
    /* GLIBC_PRIVATE, both: ld.so's own question for pthread_create's stacks, and the size libthread_db reads */
    void (*info)(size_t *, size_t *) = (void (*)(size_t *, size_t *))rt_next("_dl_get_tls_static_info");
    const uint32_t *tcb = (const uint32_t *)rt_next("_thread_db_sizeof_pthread");
    size_t size = 0, align = 0;
    if (info) info(&size, &align);
    char *tp = thread_pointer();
    const char *self = (const char *)&rt_self, *cursor = (const char *)&__memtrace_cursor;
    int ok = tcb && *tcb >= 3 * sizeof(void *) && size > *tcb && align && !(align & (align - 1));
    if (ok) {
        tls_below = size - *tcb;
        tls_tcb = *tcb;
        tls_align = align < 16 ? 16 : align;
        /* the runtime's words lie in that block (initial-exec), so the copy has its own */
        ok = self >= tp - tls_below && self + sizeof rt_self <= tp && cursor >= tp - tls_below && cursor + sizeof(char *) <= tp;
    }
    if (!ok) {
        static const char msg[] = "memtrace: glibc does not say where its static TLS lies: a thread made by clone without "
                                  "CLONE_SETTLS shares its creator's cursor, and the records of both may be lost\n";
        mt_sys3(SYS_write, 2, msg, sizeof msg - 1);
    }
    tls_known = ok ? 1 : -1;
    return ok;
}

/* A free block, or a new one; NULL when no memory is left. */
static struct clone_block *block_get(void)
{
    rt_lock_take(&blocks_lock);
    struct clone_block *b = blocks;
    for (; b; b = b->next)
        if (!b->tid || (b->tid > 0 && mt_sys2(SYS_kill, b->tid, 0) == -ESRCH)) break;
    if (!b) {
        size_t page = (size_t)rt.page, need = tls_align + tls_below + tls_tcb + 16 + sizeof *b;
        char *base = rt_map_own((need + page - 1) & ~(page - 1));
        if (base) {
            char *tp = (char *)(((uintptr_t)base + tls_below + tls_align - 1) & ~(uintptr_t)(tls_align - 1));
            b = (struct clone_block *)(((uintptr_t)tp + tls_tcb + 15) & ~(uintptr_t)15);
            b->tp = tp;
            b->next = blocks;
            blocks = b;
        }
    }
    if (b) b->tid = -1;
    rt_lock_drop(&blocks_lock);
    return b;
}

/* The creator's static TLS and TCB copied into b, the copy's self pointers at the copy, its cursor at the */
/* child's first buffer and its runtime state a fresh thread's.                                           */
static void tls_copy(struct clone_block *b)
{
    char *from = thread_pointer(), *tp = b->tp;
    rt_memcpy(tp - tls_below, from - tls_below, tls_below + tls_tcb);
    ((char **)tp)[0] = tp; /* tcbhead_t's tcb and self; the dtv stays the creator's */
    ((char **)tp)[2] = tp;
    *(char **)(tp + ((char *)&__memtrace_cursor - from)) = b->buf->base;
    struct rt_thread *self = (struct rt_thread *)(tp + ((char *)&rt_self - from));
    rt_memzero(self, sizeof *self);
    self->raw_clone = 1;
}

static int clone_child(void *p)
{
    struct clone_block *b = p;
    int (*fn)(void *) = b->fn;
    void *arg = b->arg;
    rt_thread_begin_in(b->buf, b->parent);
    int r = fn(arg);
    rt_thread_end((uint64_t)(int64_t)r); /* glibc's clone makes the exit system call next */
    return r;
}

RT_EXPORT int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
    va_list ap;
    va_start(ap, arg); /* glibc's clone takes them from their registers whether they are passed or not */
    pid_t *ptid = va_arg(ap, pid_t *);
    void *tls = va_arg(ap, void *);
    pid_t *ctid = va_arg(ap, pid_t *);
    va_end(ap);
    if (!real_clone) real_clone = (typeof(real_clone))rt_next("clone");
    if (!(flags & (CLONE_VM | CLONE_SETTLS)) && fn && stack && !rt_self.internal && rt.state == RT_RUNNING)
        return rt_clone_process(real_clone, fn, stack, flags, arg, ptid, tls, ctid);
    /* the child shares the creator's memory and would run on its TLS: its cursor, at once (a vfork child */
    /* waits, its creator stopped; CLONE_SETTLS brings a TLS of the program's)                             */
    if ((flags & (CLONE_VM | CLONE_SETTLS | CLONE_VFORK)) != CLONE_VM || !fn || !stack || rt_self.internal
        || rt.state != RT_RUNNING || !tls_layout())
        return real_clone(fn, stack, flags, arg, ptid, tls, ctid);
    rt_self.internal = 1;
    struct clone_block *b = block_get();
    if (!b) {
        rt_self.internal = 0;
        return real_clone(fn, stack, flags, arg, ptid, tls, ctid);
    }
    uint64_t old = rt_block_signals();
    b->buf = rt_buf_get(); /* with or without a trace file: the child's probes need a buffer either way */
    rt_restore_signals(old);
    b->fn = fn;
    b->arg = arg;
    b->parent = (uint64_t)rt_tid();
    tls_copy(b);
    rt_self.internal = 0;
    int r = real_clone(clone_child, stack, flags | CLONE_SETTLS, b, ptid, b->tp, ctid);
    if (r < 0) {
        int e = errno;
        rt_buf_put(b->buf);
        errno = e;
    }
    __atomic_store_n(&b->tid, r < 0 ? 0 : r, __ATOMIC_RELEASE);
    return r;
}
