/*
 * memtrace agent, wrappers: malloc & co. and mmap & co. record each call (caller, arguments, result) as an
 * MT_ALLOC record, with MEMTRACE_STACK_DEPTH > 1 followed by the frame-pointer chain's return addresses above the
 * caller (mt_frames_above, docs/stacks.md). While memtrace is attached the blocks come from the agent's own heap (heap.c), which is
 * traced as it grows and touched only through its alias view, so allocating opens nothing. glibc's
 * allocator serves only when that heap cannot (not reserved, full, a forked child; never once the program
 * set an RLIMIT_AS, where the heap's limit is the program's: limits.c): its block becomes
 * traced at once, and its own touches of the heap are not accesses of the program: inside a wrapper
 * (ts.untraced) a fault just opens the page until the wrapper returns. memcpy, memmove and memset called
 * by the program are one MT_BLOCK record each, not a fault per byte: with other threads running they work
 * on the alias view of moved memory (traced.c), else their memory is opened as a whole. dlopen reports the
 * new modules; __cxa_finalize of the agent and its decoder runs untraced. A free or realloc heap.c finds
 * bad (freed already, no block's start) is recorded, then ends the program with glibc's message and
 * abort(), as glibc does untraced; a free glibc serves is recorded before glibc sees the pointer.
 *
 * The functions the compiled-in runtime wraps too are one table (include/mt_wrapped.h): this file is its
 * fault-mode backend (AGENT_NEW, AGENT_BLOCK generate those of a common shape; the rest are written here).
 *
 * What it gets wrong: glibc calls its internal __mmap, memcpy and friends without the PLT, so those are
 * traced instruction by instruction (still correct, slower); allocations before the real allocator is
 * known come from a 64 KiB static arena and are never traced; a block operation spanning two moved pieces
 * opens its pages even with other threads running (counted as a window at risk).
 */
#include "agent.h"
#include "check/check_scan.h"

/* ------------------------------------------------------------------------------------------------ */
/* Wrappers                                                                                         */

/* dlsym may allocate before the real allocator is known: the static arena serves it (common/mt_boot.c). */
static void *boot_alloc(size_t n) { return mt_boot_alloc(n, 16); }
static int is_boot(const void *p) { return mt_boot_owns(p); }

/* Inside a wrapper: the real function's touches of traced memory open pages without being recorded. */
int enter_untraced(void)
{
    if (!g.active || ts.untraced) return 0;
    ts.untraced = 1;
    return 1;
}
void leave_untraced(void)
{
    if (ts.nlazy) {
        enter_critical();
        spin_lock(&g.lock);
        for (int i = 0; i < ts.nlazy; i++) close_locked(ts.lazy_pages[i], ts.lazy_pages[i] + g.page);
        spin_unlock(&g.lock);
        leave_critical();
        ts.nlazy = 0;
    }
    ts.untraced = 0;
}

/* A block the allocator returned becomes traced at once. */
static void trace_block(void *p, size_t n)
{
    if (!p || !n || is_boot(p)) return;
    uintptr_t s = page_down((uintptr_t)p), e = page_up((uintptr_t)p + n);
    enter_critical();
    spin_lock(&g.lock);
    if (!set_covers_locked(s, e)) {
        /* Pages already traced keep their entry; only the new part is added. */
        uintptr_t at = s;
        while (at < e) {
            struct range *r = set_find(at);
            if (r) { at = r->end; continue; }
            int i = set_index(at);
            uintptr_t stop = i < g.nset && g.set[i].start < e ? g.set[i].start : e;
            set_add_locked(at, stop, PROT_READ | PROT_WRITE, MT_REGION_HEAP);
            at = stop;
        }
    }
    spin_unlock(&g.lock);
    leave_critical();
}

static size_t usable_size(void *p) { return p && !is_boot(p) && real.malloc_usable_size ? real.malloc_usable_size(p) : 0; }

/* noinline: the frame-pointer walk starts in this frame and finds the caller among the wrapper's. */
static __attribute__((noinline)) void emit_alloc(int fn, uintptr_t caller, uintptr_t result, uint64_t usable,
                                                 long a0, long a1, long a2, long a3, long a4, long a5)
{
    struct mt_alloc_stack s; /* more[] is written only as far as it is sent */
    REC(MT_ALLOC, struct mt_alloc, a);
    s.a = a;
    const uint64_t args[6] = {(uint64_t)a0, (uint64_t)a1, (uint64_t)a2, (uint64_t)a3, (uint64_t)a4, (uint64_t)a5};
    mt_alloc_fill(&s, fn, caller, result, usable, args, g.stack_depth, (uintptr_t)__builtin_frame_address(0));
    emit(&s);
}

#define CALLER ((uintptr_t)__builtin_return_address(0))
/* The compiler may turn the agent's own struct copies into memcpy/memset calls: those bind to these   */
/* wrappers (we come first in the lookup order) and must not be recorded.                             */
#define FROM_AGENT (CALLER >= g.text_start && CALLER < g.text_end)

/* The end of every allocating wrapper: the block's size is asked while the allocator's touches are still */
/* untraced, then its pages become traced and the call is recorded. */
static void *allocated(int fn, uintptr_t caller, void *p, long a0, long a1, long a2)
{
    size_t u = usable_size(p);
    leave_untraced();
    trace_block(p, u);
    emit_alloc(fn, caller, (uintptr_t)p, u, a0, a1, a2, 0, 0, 0);
    return p;
}

/* A block of heap.c's: the record (its usable size is the block's class or pages). */
static void *served(int fn, uintptr_t caller, void *p, long a0, long a1, long a2)
{
    if (g.active) emit_alloc(fn, caller, (uintptr_t)p, p ? heap_usable(p) : 0, a0, a1, a2, 0, 0, 0);
    return p;
}

/* A checked block (memtrace run --check, check_run.c): the record carries the requested size. */
static void *checked(int fn, uintptr_t caller, void *p, size_t n, long a0, long a1, long a2)
{
    if (g.active) emit_alloc(fn, caller, (uintptr_t)p, p ? n : 0, a0, a1, a2, 0, 0, 0);
    return p;
}
void check_note_alloc(void *p, size_t n, uintptr_t pc) { checked(MT_FN_MALLOC, pc, p, n, (long)n, 0, 0); }
void check_note_free(void *p, uintptr_t pc)
{
    if (g.active) emit_alloc(MT_FN_FREE, pc, 0, 0, (long)p, 0, 0, 0, 0, 0);
}

static void *no_memory(void)
{
    errno = ENOMEM;
    return NULL;
}

/* The heap is full at the program's RLIMIT_AS (limits.c): glibc, whose mappings the kernel would still */
/* allow (its limit leaves room for the agent), must not serve either: the allocation fails as untraced. */
static int capped(void) { return heap_serves() && as_limit_heap() != ~(uint64_t)0; }

/* A word a wrapper hands back through a pointer of the program's (posix_memalign): written through the */
/* alias view when it is moved memory, directly when it is untraced, else with its page open.            */
static void put_pointer(void **out, void *p)
{
    intptr_t d = 0;
    enter_critical();
    spin_lock(&g.lock);
    int reach = reach_without_opening((uintptr_t)out, (uintptr_t)out + sizeof *out, &d);
    spin_unlock(&g.lock);
    leave_critical();
    if (reach) {
        *(void **)((char *)out + d) = p;
        return;
    }
    open_span((uintptr_t)out, (uintptr_t)out + sizeof *out, 1);
    *out = p;
    open_span((uintptr_t)out, (uintptr_t)out + sizeof *out, 0);
}

/* A free or realloc glibc would refuse (heap.c found it): the program ends as it does untraced, with     */
/* glibc's message on standard error and SIGABRT through abort() (its own SIGABRT handler runs), the call */
/* already recorded.                                                                                      */
static __attribute__((noreturn)) void refuse(enum heap_bad bad, int realloc_call)
{
    static const char *const said[] = {
        [HEAP_FREED_TCACHE] = "free(): double free detected in tcache 2\n",
        [HEAP_FREED] = "double free or corruption (!prev)\n",
        [HEAP_FREED_MAPPED] = "munmap_chunk(): invalid pointer\n",
        [HEAP_INVALID] = "free(): invalid pointer\n",
    };
    const char *m = realloc_call && bad == HEAP_INVALID ? "realloc(): invalid pointer\n" : said[bad];
    mt_sys3(SYS_write, 2, (long)m, (long)mt_strlen(m));
    abort();
}

/* realloc of a block of heap.c's: in place while it fits, else a new block (heap.c's, or glibc's in a   */
/* forked child) with the old contents copied alias to alias.                                            */
static void *resize(void *old, size_t n)
{
    int dirty;
    if (!old) return heap_alloc(n, 16, &dirty);
    if (!n) {
        heap_free(old); /* checked by the caller */
        return NULL;
    }
    size_t u = heap_usable(old);
    if (n <= u) return old;
    void *p = heap_serves() ? heap_alloc(n, 16, &dirty) : real.malloc(n);
    if (!p) return no_memory(); /* the old block stays, as glibc leaves it */
    real.memcpy(heap_owns(p) ? heap_alias(p) : p, heap_alias(old), u);
    heap_free(old);
    return p;
}

/* memalign's alignment as glibc takes it: at least 16, a power of two (rounded up). 0: none fits. */
static size_t alignment(size_t al)
{
    size_t a = 16;
    while (a < al && a) a *= 2;
    return a;
}

EXPORT void *calloc(size_t m, size_t n)
{
    if (!hooks_ready) {
        void *p = boot_alloc(m * n);
        if (p) mt_memzero(p, m * n);
        return p;
    }
    size_t t;
    int dirty;
    if (chk.on) {
        void *c = __builtin_mul_overflow(m, n, &t) ? no_memory() : check_alloc(t, 16, 0, 1, CALLER, 1);
        return checked(MT_FN_CALLOC, CALLER, c, t, (long)m, (long)n, 0);
    }
    void *p = heap_serves() && !__builtin_mul_overflow(m, n, &t) ? heap_alloc(t, 16, &dirty) : NULL;
    if (p) {
        if (dirty) real.memset(heap_alias(p), 0, t);
        return served(MT_FN_CALLOC, CALLER, p, (long)m, (long)n, 0);
    }
    if (capped()) return served(MT_FN_CALLOC, CALLER, no_memory(), (long)m, (long)n, 0);
    if (!enter_untraced()) return real.calloc(m, n);
    p = real.calloc(m, n);
    return allocated(MT_FN_CALLOC, CALLER, p, (long)m, (long)n, 0);
}

EXPORT void *realloc(void *old, size_t n)
{
    if (is_boot(old)) { /* a block from before the allocator was known: move it out */
        void *p = malloc(n);
        if (p) mt_memcpy(p, old, n < mt_boot_extent(old) ? n : mt_boot_extent(old));
        return p;
    }
    if (!hooks_ready) return boot_alloc(n);
    if (ts.scan_arena && (!old || mc_arena_owns(ts.scan_arena, old))) return mc_arena_realloc(ts.scan_arena, old, n);
    if (chk.on) return checked(MT_FN_REALLOC, CALLER, check_realloc(old, n, CALLER), n, (long)old, (long)n, 0);
    if (heap_owns(old) || (!old && heap_serves())) {
        enum heap_bad bad = old ? heap_check(old) : HEAP_OK;
        if (bad) {
            if (g.active) emit_alloc(MT_FN_REALLOC, CALLER, 0, 0, (long)old, (long)n, 0, 0, 0, 0);
            refuse(bad, 1);
        }
        return served(MT_FN_REALLOC, CALLER, resize(old, n), (long)old, (long)n, 0);
    }
    if (!enter_untraced()) return real.realloc(old, n);
    void *p = real.realloc(old, n);
    return allocated(MT_FN_REALLOC, CALLER, p, (long)old, (long)n, 0);
}

EXPORT void *reallocarray(void *old, size_t m, size_t n)
{
    size_t t;
    if (!hooks_ready || is_boot(old)) return __builtin_mul_overflow(m, n, &t) ? NULL : realloc(old, t);
    if (chk.on) {
        void *c = __builtin_mul_overflow(m, n, &t) ? no_memory() : check_realloc(old, t, CALLER);
        return checked(MT_FN_REALLOCARRAY, CALLER, c, t, (long)old, (long)m, (long)n);
    }
    if (heap_owns(old) || (!old && heap_serves())) {
        enum heap_bad bad = old ? heap_check(old) : HEAP_OK;
        if (bad) {
            if (g.active) emit_alloc(MT_FN_REALLOCARRAY, CALLER, 0, 0, (long)old, (long)m, (long)n, 0, 0, 0);
            refuse(bad, 1);
        }
        void *p = __builtin_mul_overflow(m, n, &t) ? no_memory() : resize(old, t);
        return served(MT_FN_REALLOCARRAY, CALLER, p, (long)old, (long)m, (long)n);
    }
    if (!enter_untraced()) return real.reallocarray(old, m, n);
    void *p = real.reallocarray(old, m, n);
    return allocated(MT_FN_REALLOCARRAY, CALLER, p, (long)old, (long)m, (long)n);
}

EXPORT void free(void *p)
{
    if (!p || is_boot(p)) return;
    if (!hooks_ready) return;
    if (ts.scan_arena && mc_arena_owns(ts.scan_arena, p)) return mc_arena_free(ts.scan_arena, p);
    /* untraced code (libc inside a wrapper, the check report's posix_spawn of c++filt at exit) mallocs from */
    /* the check heap too: its blocks go back there, never to heap.c, which would take them for invalid   */
    if (chk.on && (!ts.untraced || heap_owns(p))) {
        if (!check_free(p, 0, CALLER, NULL)) {
            if (g.active) emit_alloc(MT_FN_FREE, CALLER, 0, 0, (long)p, 0, 0, 0, 0, 0);
            return;
        }
    }
    if (heap_owns(p)) {
        PROF_BEGIN(t0);
        enum heap_bad bad = heap_free(p);
        if (g.active) emit_alloc(MT_FN_FREE, CALLER, 0, 0, (long)p, 0, 0, 0, 0, 0);
        if (bad) refuse(bad, 0);
        PROF_END(PROF_ALLOC_CALL, t0);
        return;
    }
    if (!g.active || ts.untraced) { real.free(p); return; }
    /* Recorded before the block is released: glibc ends the program on a pointer that is no block of its */
    /* own, and another thread reusing the block is recorded after this free.                            */
    emit_alloc(MT_FN_FREE, CALLER, 0, 0, (long)p, 0, 0, 0, 0, 0);
    enter_untraced();
    real.free(p);
    leave_untraced();
}

EXPORT size_t malloc_usable_size(void *p)
{
    if (!p || is_boot(p)) return 0;
    if (chk.on && heap_owns(p)) return check_usable(p);
    if (heap_owns(p)) return heap_usable(p);
    return real.malloc_usable_size ? real.malloc_usable_size(p) : 0;
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
    if (!hooks_ready) return ENOMEM;
    if (chk.on) {
        if (!align || (align & (align - 1)) || align % sizeof(void *)) return EINVAL;
        void *p = check_alloc(n, alignment(align), 0, 3, CALLER, 0);
        if (p) put_pointer(out, p);
        int rc = p ? 0 : ENOMEM;
        emit_alloc(MT_FN_POSIX_MEMALIGN, CALLER, (uintptr_t)p, p ? n : 0, (long)out, (long)align, (long)n, 0, 0, rc);
        return rc;
    }
    if (heap_serves()) {
        if (!align || (align & (align - 1)) || align % sizeof(void *)) return EINVAL;
        int dirty;
        void *p = heap_alloc(n, alignment(align), &dirty);
        if (p) put_pointer(out, p);
        int rc = p ? 0 : ENOMEM;
        emit_alloc(MT_FN_POSIX_MEMALIGN, CALLER, (uintptr_t)p, p ? heap_usable(p) : 0, (long)out, (long)align, (long)n,
                   0, 0, rc);
        return rc;
    }
    if (!enter_untraced()) return real.posix_memalign(out, align, n);
    void *p = NULL;
    int rc = real.posix_memalign(&p, align, n);
    size_t u = rc == 0 ? usable_size(p) : 0;
    leave_untraced();
    trace_block(rc == 0 ? p : NULL, u);
    if (rc == 0) put_pointer(out, p);
    emit_alloc(MT_FN_POSIX_MEMALIGN, CALLER, rc == 0 ? (uintptr_t)p : 0, u, (long)out, (long)align, (long)n, 0, 0, rc);
    return rc;
}

/* The allocators of the table (kind NEW): heap.c's block, else glibc's by the old route. Before the real */
/* allocator is known, the boot arena serves them, aligned as asked (up to a page). The block's site is   */
/* the caller, or the caller of operator new when the agent's operator new made the call (check_run.c).   */
static size_t mt_page(void) { return (size_t)g.page; }
#define AGENT_NEW(name, ret, params, args, event, al, size, a0, a1) \
    EXPORT ret name params \
    { \
        if (event == MT_FN_MALLOC && __builtin_expect(ts.scan_arena != NULL, 0)) \
            return mc_arena_malloc(ts.scan_arena, size); /* a stream scanf's %m buffer (check_scan.h) */ \
        uintptr_t site = ts.new_caller ? ts.new_caller : CALLER; \
        ts.new_caller = 0; \
        if (!hooks_ready) return alignment(al) ? mt_boot_alloc(size, alignment(al)) : NULL; \
        if (chk.on) { \
            void *c = alignment(al) ? check_alloc(size, alignment(al), 0, event == MT_FN_MALLOC ? 0 : 3, site, 0) : no_memory(); \
            return checked(event, site, c, size, (long)(a0), (long)(a1), 0); \
        } \
        int dirty; \
        PROF_BEGIN(t0); \
        void *p = heap_serves() && alignment(al) ? heap_alloc(size, alignment(al), &dirty) : NULL; \
        if (p) { \
            served(event, site, p, (long)(a0), (long)(a1), 0); \
            PROF_END(PROF_ALLOC_CALL, t0); \
            return p; \
        } \
        if (capped()) return served(event, site, no_memory(), (long)(a0), (long)(a1), 0); \
        if (!enter_untraced()) return real.name args; \
        p = real.name args; \
        return allocated(event, site, p, (long)(a0), (long)(a1), 0); \
    }

/* A file the program maps is announced with its path, so that its region is named after the file. */
static void emit_file_mapping(uintptr_t start, uintptr_t end, int prot, int fd, off_t off)
{
    struct mt_mapping_rec r;
    if (mt_file_mapping_record(&r, start, end, prot, fd, off, MT_MAP_TRACED)) emit(&r);
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (!hooks_ready) return (void *)mt_sys6(SYS_mmap, (long)addr, (long)len, prot, flags, fd, off);
    void *p = real.mmap(addr, len, prot, flags, fd, off);
    if (!g.active || ts.untraced) return p;
    if (p != MAP_FAILED && !(flags & MAP_ANONYMOUS) && fd >= 0)
        emit_file_mapping((uintptr_t)p, page_up((uintptr_t)p + len), prot, fd, off);
    if (p != MAP_FAILED) {
        enter_critical();
        spin_lock(&g.lock);
        set_add_locked((uintptr_t)p, page_up((uintptr_t)p + len), prot,
                       (flags & MAP_ANONYMOUS) ? MT_REGION_ANON : MT_REGION_FILE);
        spin_unlock(&g.lock);
        leave_critical();
    }
    emit_alloc(MT_FN_MMAP, CALLER, (uintptr_t)p, p == MAP_FAILED ? 0 : page_up(len), (long)addr, (long)len, prot,
               flags, fd, (long)off);
    return p;
}
EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
    __attribute__((alias("mmap")));

EXPORT void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
    void *want = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        want = va_arg(ap, void *);
        va_end(ap);
    }
    void *p = real.mremap(old, old_len, new_len, flags, want);
    if (g.active && !ts.untraced)
        emit_alloc(MT_FN_MREMAP, CALLER, (uintptr_t)p, p == MAP_FAILED ? 0 : page_up(new_len), (long)old,
                   (long)old_len, (long)new_len, flags, (long)want, 0);
    return p;
}

EXPORT int munmap(void *addr, size_t len)
{
    int rc = real.munmap(addr, len);
    if (g.active && !ts.untraced)
        emit_alloc(MT_FN_MUNMAP, CALLER, (uintptr_t)rc, 0, (long)addr, (long)len, 0, 0, 0, 0);
    return rc;
}

static void emit_call_block(int fn, int op, uintptr_t caller, const void *dst, const void *src, size_t n)
{
    if (!g.recording || !n) return;
    REC(MT_BLOCK, struct mt_block, b);
    b.h.flags = (uint8_t)op;
    b.ip = caller;
    b.dst = (uintptr_t)dst;
    b.src = (uintptr_t)src;
    b.len = n;
    b.what = (uint32_t)fn;
    emit(&b);
}

/* A block operation of the program's, inside enter_untraced(): one block event, then the operation in  */
/* pieces the agent reaches without opening anything: each piece lies in one moved piece of memory       */
/* (through its alias view) or in untraced memory, on both sides, so an operation across several moved   */
/* pieces (a module's .data and .bss, the heap and a thread arena) opens nothing either. Counted as a     */
/* redirected step while it runs (fork waits for it). Memory traced but not moved (a file mapping), and   */
/* a memmove whose destination overlaps its source from above across pieces (pieces go forward), are     */
/* opened instead: one mprotect per range from there on, not a fault per page.                          */
struct block_job {
    uintptr_t d, s;              /* s 0: no source */
    size_t n, done;              /* bytes in all, handed out so far */
    size_t opened;               /* offset from which the rest was opened, or SIZE_MAX */
    int counted;                 /* in g.redirected */
    int whole;                   /* pieces going forward would be wrong (d overlaps s from above): all in one or opened */
};

static void open_rest(struct block_job *j)
{
    if (j->s) open_span(j->s + j->done, j->s + j->n, 1);
    open_span(j->d + j->done, j->d + j->n, 1);
    j->opened = j->done;
}

static void block_begin(struct block_job *j, int fn, int op, uintptr_t caller, void *d, const void *s, size_t n)
{
    emit_call_block(fn, op, caller, d, s, n);
    *j = (struct block_job){(uintptr_t)d, (uintptr_t)s, n, 0, SIZE_MAX, 0, s && d > s && (uintptr_t)d < (uintptr_t)s + n};
    if (!g.recording) return; /* nothing is protected */
    if (g.aliases) {
        __atomic_add_fetch(&g.redirected, 1, __ATOMIC_ACQUIRE);
        j->counted = 1;
    } else {
        open_rest(j);
    }
}

/* The next piece: its offset, the deltas to add on each side, its length. 0 when all is done. */
static int block_next(struct block_job *j, size_t *off, intptr_t *dd, intptr_t *sd, size_t *len)
{
    if (j->done >= j->n) return 0;
    *off = j->done;
    *dd = *sd = 0;
    if (j->counted && j->opened == SIZE_MAX) {
        enter_critical();
        spin_lock(&g.lock);
        size_t piece = reach_stretch_locked(j->d + j->done, j->d + j->n, dd);
        if (j->s && piece) {
            size_t other = reach_stretch_locked(j->s + j->done, j->s + j->n, sd);
            if (other < piece) piece = other;
        }
        spin_unlock(&g.lock);
        leave_critical();
        if (piece && (!j->whole || piece == j->n)) {
            *len = piece;
            j->done += piece;
            return 1;
        }
        *dd = *sd = 0;
        open_rest(j);
    }
    *len = j->n - j->done;
    j->done = j->n;
    return 1;
}

static void block_end(struct block_job *j)
{
    if (j->counted) __atomic_sub_fetch(&g.redirected, 1, __ATOMIC_RELEASE);
    if (j->opened != SIZE_MAX) {
        open_span(j->d + j->opened, j->d + j->n, 0);
        if (j->s) open_span(j->s + j->opened, j->s + j->n, 0);
    }
    leave_untraced();
}

/* The block operations of the table (kind BLOCK). Inside our own handlers the caller is Zydis decoding */
/* for us, and before dlsym is done there is no libc version yet: those get plain loops (libc's would  */
/* read libc's own traced data inside a handler). The agent's own struct copies bind here too          */
/* (FROM_AGENT) and are not recorded. The length parameter is set to each piece's length in turn.      */
#define D ((void *)((char *)d + off + dd))
#define S ((const void *)((const char *)s + off + sd))
#define AGENT_BLOCK(name, ret, params, args, event, op, dst, src, len, value) \
    EXPORT ret name params \
    { \
        if (!hooks_ready || ts.in_handler) { \
            mt_plain_block(op == MT_BLK_COPY, dst, src, len, value); \
            return dst; \
        } \
        intptr_t dd = 0, sd = 0; \
        size_t off = 0; \
        if (FROM_AGENT || !enter_untraced()) return real.name args; \
        if (chk.on) check_block(dst, src, len, CALLER, #name); \
        struct block_job job; \
        block_begin(&job, event, op, CALLER, dst, src, len); \
        if (!job.counted && job.opened == SIZE_MAX) { /* not recording */ \
            real.name args; \
            leave_untraced(); \
            return dst; \
        } \
        while (block_next(&job, &off, &dd, &sd, &len)) real.name args; \
        block_end(&job); \
        return dst; \
    }

#define AGENT_OWN(...)
#define AGENT_WRAP(kind, ...) AGENT_##kind(__VA_ARGS__)
MT_WRAPPED(AGENT_WRAP)

EXPORT void *dlopen(const char *file, int mode)
{
    int mine = enter_untraced();
    void *h = real.dlopen(file, mode);
    if (h && g.active) scan_new_modules(1);
    if (mine) leave_untraced();
    return h;
}

/* At exit every shared object finalizes itself through __cxa_finalize, which walks libc's exit list:  */
/* for the agent and the decoder it loaded, that walk is the agent's doing, not the program's.          */
extern void *__dso_handle;
EXPORT void __cxa_finalize(void *dso)
{
    int ours = dso == &__dso_handle || in_decoder_object((uintptr_t)dso);
    int mine = ours && enter_untraced();
    real.cxa_finalize(dso);
    if (mine) leave_untraced();
}
