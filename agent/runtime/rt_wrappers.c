/*
 * rt_wrappers.c: the library calls libmemtrace-rt.so records, as events in the calling thread's buffer.
 *
 *   malloc calloc realloc reallocarray free posix_memalign aligned_alloc memalign valloc pvalloc
 *       -> MT_ALLOC {caller, result, usable size, arguments[, callers above the caller (MEMTRACE_STACK_DEPTH > 1)]}
 *   mmap mmap64 mremap munmap  -> MT_ALLOC (and MT_MAPPING with the path for a file mapping)
 *   memcpy memmove memset      -> MT_BLOCK copy/copy/store, `what` = MT_FN_MEMCPY/MEMMOVE/MEMSET
 *   read write pread(64) pwrite(64) readv writev recv send recvfrom sendto
 *                              -> MT_BLOCK store (the kernel wrote the buffer) or fetch (it read it) with
 *                                 MT_BLK_SYSCALL and the system call's number, one per iovec element used
 *   fread fwrite               -> MT_BLOCK store/fetch, `what` = MT_FN_FREAD/MT_FN_FWRITE
 *   dlopen                     -> MT_MODULE and MT_MAPPING for what it loaded
 *   dlclose                    -> nothing recorded; the next object loaded is reported (rt_modules_resync)
 *
 * The allocation, mapping and block functions are the table both fault mode and this runtime wrap
 * (include/mt_wrapped.h): malloc, the aligned allocators and the block operations are generated from it
 * (RT_NEW, RT_BLOCK), the rest written here by hand. The I/O functions are one table (io_table): which argument is the buffer, whether it is an iovec array,
 * how many bytes moved (the result, or the result times the item size); each wrapper is one line.
 * Block and I/O events are recorded only while recording is on; allocations always are, so a block
 * allocated before memtrace_start() still has its name. A free takes its sequence number before the block
 * is released, an allocation after it is obtained, so another thread reusing the block is ordered after.
 *
 * What it gets wrong: calls glibc makes internally (printf's write, strdup's malloc) do not go through
 * these wrappers; the program's accesses to such memory still carry their addresses. The `ip` of an I/O
 * event is the caller of the libc function, not the address after its syscall instruction. recvmsg,
 * sendmsg, preadv and pwritev are not recorded. realloc's release of the old block is ordered with the new
 * block's allocation, not before it.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "mt_wrapped.h"
#include "rt.h"

int rt_hooks_ready;

static struct {
    MT_WRAPPED(MT_WRAPPED_REAL) /* the table's functions (include/mt_wrapped.h) */
} real;

/* dlsym may allocate before the real allocator is known: a static arena serves it. It also serves the  */
/* allocations glibc makes while the runtime creates its writer thread (RT_PRIVATE_HEAP), so that the    */
/* program's heap looks the same whether the trace goes to a file or is discarded (common/mt_boot.c).  */
static void *boot_alloc(size_t n) { return mt_boot_alloc(n, 16); }
static int is_boot(const void *p) { return mt_boot_owns(p); }

#define RESOLVE(name) real.name = (typeof(real.name))rt_next(#name)
void rt_wrappers_init(void)
{
    MT_WRAPPED(MT_WRAPPED_RESOLVE)
    rt_hooks_ready = 1;
}

/* The runtime's own struct copies may become memcpy/memset calls that bind to these wrappers. */
static int from_runtime(uint64_t caller) { return caller >= rt.text_start && caller < rt.text_end; }
static int quiet(void) { return rt_self.internal || rt.state != RT_RUNNING; }

/* ---- allocations ---------------------------------------------------------------------------------- */

/* noinline: the frame-pointer walk starts in this frame and finds the caller among the wrapper's. */
static __attribute__((noinline)) void emit_alloc(int fn, uint64_t seq, uint64_t caller, uint64_t result,
                                                 uint64_t usable, uint64_t a0, uint64_t a1, uint64_t a2,
                                                 uint64_t a3, uint64_t a4, uint64_t a5)
{
    struct mt_alloc_stack s; /* more[] is written only as far as it is sent */
    RT_REC(MT_ALLOC, struct mt_alloc, a);
    s.a = a;
    const uint64_t args[6] = {a0, a1, a2, a3, a4, a5};
    mt_alloc_fill(&s, fn, caller, result, usable, args, rt.stack_depth, (uintptr_t)__builtin_frame_address(0));
    rt_emit_seq(&s, s.a.h.size, seq);
}

/* The block's usable size for the allocation event: the runtime's question, so its accesses in rewritten */
/* libc go to the sink (rw_sink_enter), not to the program's trace.                                       */
static size_t usable_size(void *p)
{
    if (!p || is_boot(p)) return 0;
    char *saved = rw_sink_enter();
    size_t n = malloc_usable_size(p);
    rw_sink_leave(saved);
    return n;
}

static void *allocated(int fn, uint64_t caller, void *p, uint64_t a0, uint64_t a1, uint64_t a2)
{
    if (!quiet()) emit_alloc(fn, rt_next_seq(), caller, (uintptr_t)p, usable_size(p), a0, a1, a2, 0, 0, 0);
    return p;
}

static int boot_only(void) { return !rt_hooks_ready || rt_self.internal == RT_PRIVATE_HEAP; }

RT_EXPORT void *calloc(size_t m, size_t n)
{
    if (boot_only()) {
        size_t t;
        if (__builtin_mul_overflow(m, n, &t)) return NULL;
        return boot_alloc(t); /* the arena is zero and never reused */
    }
    return allocated(MT_FN_CALLOC, RT_CALLER, real.calloc(m, n), m, n, 0);
}

RT_EXPORT void *realloc(void *old, size_t n)
{
    if (is_boot(old)) { /* a block from before the allocator was known: move it out */
        void *p = malloc(n);
        if (p) rt_memcpy(p, old, n < mt_boot_extent(old) ? n : mt_boot_extent(old));
        return p;
    }
    if (boot_only()) return boot_alloc(n);
    return allocated(MT_FN_REALLOC, RT_CALLER, real.realloc(old, n), (uintptr_t)old, n, 0);
}

RT_EXPORT void *reallocarray(void *old, size_t m, size_t n)
{
    if (!rt_hooks_ready || is_boot(old)) {
        size_t t;
        return __builtin_mul_overflow(m, n, &t) ? NULL : realloc(old, t);
    }
    return allocated(MT_FN_REALLOCARRAY, RT_CALLER, real.reallocarray(old, m, n), (uintptr_t)old, m, n);
}

RT_EXPORT void free(void *p)
{
    if (!p || is_boot(p) || !rt_hooks_ready) return;
    if (quiet()) { real.free(p); return; }
    /* recorded before glibc sees it: a double or invalid free ends the program there (SIGABRT) */
    emit_alloc(MT_FN_FREE, rt_next_seq(), RT_CALLER, 0, 0, (uintptr_t)p, 0, 0, 0, 0, 0);
    real.free(p);
}

RT_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
    if (boot_only()) return (*out = mt_boot_alloc(n, align)) ? 0 : 12; /* ENOMEM */
    int rc = real.posix_memalign(out, align, n);
    if (!quiet()) {
        void *p = rc == 0 ? *out : NULL;
        emit_alloc(MT_FN_POSIX_MEMALIGN, rt_next_seq(), RT_CALLER, (uintptr_t)p, usable_size(p), (uintptr_t)out,
                   align, n, 0, 0, (uint64_t)rc);
    }
    return rc;
}

/* The allocators of the table (kind NEW): glibc's block, recorded. */
static size_t mt_page(void) { return (size_t)rt.page; }
/* The caller of operator new while it runs (0: none): the site of the malloc it makes. */
static __thread uint64_t new_caller __attribute__((tls_model("initial-exec")));

#define RT_NEW(name, ret, params, args, event, al, size, a0, a1) \
    RT_EXPORT ret name params \
    { \
        uint64_t site = new_caller ? new_caller : RT_CALLER; \
        new_caller = 0; \
        if (boot_only()) return mt_boot_alloc(size, al); \
        return allocated(event, site, real.name args, (a0), (a1), 0); \
    }

/* operator new is malloc, as libstdc++'s is underneath, with the caller of new as the block's site, as the */
/* fault-mode agent does (check_run.c): libstdc++'s operator new keeps no frame pointer, so the stack     */
/* beyond it could not be trusted (docs/stacks.md) and every block was named by operator new. Only when  */
/* malloc fails does libstdc++'s own operator run, for the new handler and std::bad_alloc.               */
static void *(*real_new)(size_t), *(*real_new_array)(size_t);
static void *plain_new_nothrow(size_t n, uint64_t caller)
{
    new_caller = caller;
    void *p = malloc(n);
    new_caller = 0;
    return p;
}
static void *plain_new(size_t n, uint64_t caller, void *(**real)(size_t), const char *name)
{
    void *p = plain_new_nothrow(n, caller);
    if (p || !(*real || (*real = (void *(*)(size_t))rt_next(name)))) return p;
    return (*real)(n);
}
RT_EXPORT void *_Znwm(size_t n) { return plain_new(n, RT_CALLER, &real_new, "_Znwm"); }
RT_EXPORT void *_Znam(size_t n) { return plain_new(n, RT_CALLER, &real_new_array, "_Znam"); }
RT_EXPORT void *_ZnwmRKSt9nothrow_t(size_t n, const void *t) { (void)t; return plain_new_nothrow(n, RT_CALLER); }
RT_EXPORT void *_ZnamRKSt9nothrow_t(size_t n, const void *t) { (void)t; return plain_new_nothrow(n, RT_CALLER); }

/* ---- mappings ------------------------------------------------------------------------------------- */

static uint64_t page_up(uint64_t a) { return (a + (uint64_t)rt.page - 1) & ~(uint64_t)(rt.page - 1); }

/* A file the program maps is announced with its path, so that its region is named after the file. */
static void emit_file_mapping(uint64_t start, uint64_t end, int prot, int fd, off_t off)
{
    struct mt_mapping_rec r;
    size_t size = mt_file_mapping_record(&r, start, end, prot, fd, off, 0);
    if (!size) return;
    r.m.h.tid = (uint32_t)rt_tid();
    rt_emit(&r, size);
}

RT_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (!rt_hooks_ready) return (void *)mt_sys6(SYS_mmap, (long)addr, (long)len, prot, flags, fd, off);
    void *p = real.mmap(addr, len, prot, flags, fd, off);
    if (quiet() || from_runtime(RT_CALLER)) return p;
    if (p != MAP_FAILED && !(flags & MAP_ANONYMOUS) && fd >= 0)
        emit_file_mapping((uintptr_t)p, page_up((uintptr_t)p + len), prot, fd, off);
    emit_alloc(MT_FN_MMAP, rt_next_seq(), RT_CALLER, (uintptr_t)p, p == MAP_FAILED ? 0 : page_up(len),
               (uintptr_t)addr, len, (uint64_t)prot, (uint64_t)flags, (uint64_t)fd, (uint64_t)off);
    return p;
}
RT_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off) __attribute__((alias("mmap")));

RT_EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
    void *want = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        want = va_arg(ap, void *);
        va_end(ap);
    }
    void *p = real.mremap(old, old_len, new_len, flags, want);
    if (!quiet())
        emit_alloc(MT_FN_MREMAP, rt_next_seq(), RT_CALLER, (uintptr_t)p, p == MAP_FAILED ? 0 : page_up(new_len),
                   (uintptr_t)old, old_len, new_len, (uint64_t)flags, (uintptr_t)want, 0);
    return p;
}

RT_EXPORT int munmap(void *addr, size_t len)
{
    if (!rt_hooks_ready) return (int)mt_sys2(SYS_munmap, addr, len);
    if (quiet() || from_runtime(RT_CALLER)) return real.munmap(addr, len);
    uint64_t seq = rt_next_seq();
    int rc = real.munmap(addr, len);
    emit_alloc(MT_FN_MUNMAP, seq, RT_CALLER, (uint64_t)(int64_t)rc, 0, (uintptr_t)addr, len, 0, 0, 0, 0);
    return rc;
}

/* ---- block operations ----------------------------------------------------------------------------- */

static void emit_block(int flags, uint32_t what, uint64_t ip, const void *dst, const void *src, uint64_t len)
{
    RT_REC(MT_BLOCK, struct mt_block, b);
    b.h.flags = (uint8_t)flags;
    b.ip = ip;
    b.dst = (uintptr_t)dst;
    b.src = (uintptr_t)src;
    b.len = len;
    b.what = what;
    rt_emit(&b, sizeof b);
}

static int block_recorded(uint64_t caller, size_t n) { return n && rt.recording && !quiet() && !from_runtime(caller); }

/* The block operations of the table (kind BLOCK): one event, then glibc's function on the same memory. */
#define D d
#define S s
#define RT_BLOCK(name, ret, params, args, event, op, dst, src, len, value) \
    RT_EXPORT ret name params \
    { \
        if (!rt_hooks_ready) { \
            mt_plain_block(op == MT_BLK_COPY, dst, src, len, value); \
            return dst; \
        } \
        if (block_recorded(RT_CALLER, len)) emit_block(op, event, RT_CALLER, dst, src, len); \
        return real.name args; \
    }

#define RT_OWN(...)
#define RT_WRAP(kind, ...) RT_##kind(__VA_ARGS__)
MT_WRAPPED(RT_WRAP)

/* ---- I/O ------------------------------------------------------------------------------------------ */

enum io_count { IO_BYTES, IO_IOVEC, IO_ITEMS };
struct io_fn {
    const char *name;
    uint32_t what;          /* syscall number (with MT_BLK_SYSCALL) or enum mt_blockfn */
    uint8_t flags;          /* MT_BLK_STORE (the buffer was written) or MT_BLK_FETCH (read), | MT_BLK_SYSCALL */
    uint8_t count;          /* enum io_count: how the result says what moved */
    uint8_t buf;            /* argument index of the buffer (or iovec array) */
    uint8_t aux;            /* IO_BYTES: the length's index (recv with MSG_TRUNC reports more than it wrote); */
                            /* IO_IOVEC: the iovec count's index; IO_ITEMS: the item size's index         */
    void *real;
};

enum { IO_READ, IO_WRITE, IO_PREAD, IO_PWRITE, IO_READV, IO_WRITEV, IO_RECV, IO_SEND, IO_RECVFROM, IO_SENDTO,
       IO_FREAD, IO_FWRITE, IO_N };

#define K(op) ((op) | MT_BLK_SYSCALL)
static struct io_fn io_table[IO_N] = {
    [IO_READ] = {"read", SYS_read, K(MT_BLK_STORE), IO_BYTES, 1, 2, NULL},
    [IO_WRITE] = {"write", SYS_write, K(MT_BLK_FETCH), IO_BYTES, 1, 2, NULL},
    [IO_PREAD] = {"pread64", SYS_pread64, K(MT_BLK_STORE), IO_BYTES, 1, 2, NULL},
    [IO_PWRITE] = {"pwrite64", SYS_pwrite64, K(MT_BLK_FETCH), IO_BYTES, 1, 2, NULL},
    [IO_READV] = {"readv", SYS_readv, K(MT_BLK_STORE), IO_IOVEC, 1, 2, NULL},
    [IO_WRITEV] = {"writev", SYS_writev, K(MT_BLK_FETCH), IO_IOVEC, 1, 2, NULL},
    [IO_RECV] = {"recv", SYS_recvfrom, K(MT_BLK_STORE), IO_BYTES, 1, 2, NULL},
    [IO_SEND] = {"send", SYS_sendto, K(MT_BLK_FETCH), IO_BYTES, 1, 2, NULL},
    [IO_RECVFROM] = {"recvfrom", SYS_recvfrom, K(MT_BLK_STORE), IO_BYTES, 1, 2, NULL},
    [IO_SENDTO] = {"sendto", SYS_sendto, K(MT_BLK_FETCH), IO_BYTES, 1, 2, NULL},
    [IO_FREAD] = {"fread", MT_FN_FREAD, MT_BLK_STORE, IO_ITEMS, 0, 1, NULL},
    [IO_FWRITE] = {"fwrite", MT_FN_FWRITE, MT_BLK_FETCH, IO_ITEMS, 0, 1, NULL},
};

static void *io_real(int k)
{
    struct io_fn *f = &io_table[k];
    if (!f->real) f->real = rt_next(f->name);
    return f->real;
}

static void io_record(int k, uint64_t caller, const uint64_t *a, long result)
{
    const struct io_fn *f = &io_table[k];
    if (result <= 0 || !block_recorded(caller, 1)) return;
    int store = (f->flags & MT_BLK_OP_MASK) == MT_BLK_STORE;
    uint64_t moved = f->count == IO_ITEMS ? (uint64_t)result * a[f->aux] : (uint64_t)result;
    if (f->count == IO_BYTES && moved > a[f->aux]) moved = a[f->aux];
    if (f->count != IO_IOVEC) {
        const void *buf = (const void *)(uintptr_t)a[f->buf];
        emit_block(f->flags, f->what, caller, store ? buf : NULL, store ? NULL : buf, moved);
        return;
    }
    const struct iovec *iov = (const struct iovec *)(uintptr_t)a[f->buf];
    for (uint64_t i = 0; i < a[f->aux] && moved; i++) {
        uint64_t n = iov[i].iov_len < moved ? iov[i].iov_len : moved;
        if (n) emit_block(f->flags, f->what, caller, store ? iov[i].iov_base : NULL, store ? NULL : iov[i].iov_base, n);
        moved -= n;
    }
}

/* One line per function: its type, its parameters, the call, and the arguments as integers. */
#define IO_WRAPPER(k, ret, name, params, call, ...) \
    RT_EXPORT ret name params \
    { \
        ret r = ((ret(*) params)io_real(k)) call; \
        uint64_t a[] = {__VA_ARGS__}; \
        io_record(k, RT_CALLER, a, (long)r); \
        return r; \
    }
#define U(x) ((uint64_t)(uintptr_t)(x))
IO_WRAPPER(IO_READ, ssize_t, read, (int fd, void *b, size_t n), (fd, b, n), U(fd), U(b), n)
IO_WRAPPER(IO_WRITE, ssize_t, write, (int fd, const void *b, size_t n), (fd, b, n), U(fd), U(b), n)
IO_WRAPPER(IO_PREAD, ssize_t, pread64, (int fd, void *b, size_t n, off_t o), (fd, b, n, o), U(fd), U(b), n)
IO_WRAPPER(IO_PWRITE, ssize_t, pwrite64, (int fd, const void *b, size_t n, off_t o), (fd, b, n, o), U(fd), U(b), n)
IO_WRAPPER(IO_READV, ssize_t, readv, (int fd, const struct iovec *v, int c), (fd, v, c), U(fd), U(v), U(c))
IO_WRAPPER(IO_WRITEV, ssize_t, writev, (int fd, const struct iovec *v, int c), (fd, v, c), U(fd), U(v), U(c))
IO_WRAPPER(IO_RECV, ssize_t, recv, (int fd, void *b, size_t n, int fl), (fd, b, n, fl), U(fd), U(b), n)
IO_WRAPPER(IO_SEND, ssize_t, send, (int fd, const void *b, size_t n, int fl), (fd, b, n, fl), U(fd), U(b), n)
IO_WRAPPER(IO_RECVFROM, ssize_t, recvfrom, (int fd, void *b, size_t n, int fl, struct sockaddr *sa, socklen_t *sl),
           (fd, b, n, fl, sa, sl), U(fd), U(b), n)
IO_WRAPPER(IO_SENDTO, ssize_t, sendto, (int fd, const void *b, size_t n, int fl, const struct sockaddr *sa, socklen_t sl),
           (fd, b, n, fl, sa, sl), U(fd), U(b), n)
IO_WRAPPER(IO_FREAD, size_t, fread, (void *b, size_t sz, size_t n, FILE *fp), (b, sz, n, fp), U(b), sz, n)
IO_WRAPPER(IO_FWRITE, size_t, fwrite, (const void *b, size_t sz, size_t n, FILE *fp), (b, sz, n, fp), U(b), sz, n)
RT_EXPORT ssize_t pread(int fd, void *b, size_t n, off_t o) __attribute__((alias("pread64")));
RT_EXPORT ssize_t pwrite(int fd, const void *b, size_t n, off_t o) __attribute__((alias("pwrite64")));

/* ---- modules -------------------------------------------------------------------------------------- */

RT_EXPORT void *dlopen(const char *file, int mode)
{
    if (!real.dlopen) RESOLVE(dlopen);
    void *h = real.dlopen(file, mode);
    if (h) rw_dlopen_returned();
    if (h && !quiet()) rt_scan_new_modules();
    return h;
}

/* Not in mt_wrapped.h's table: the fault-mode agent has no use for it. */
static int (*real_dlclose)(void *);

RT_EXPORT int dlclose(void *handle)
{
    if (!real_dlclose) real_dlclose = (int (*)(void *))rt_next("dlclose");
    int r = real_dlclose(handle);
    rw_dlopen_returned();
    if (!quiet()) rt_modules_resync();
    return r;
}
