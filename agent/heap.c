/*
 * memtrace agent, the heap: while memtrace is attached, malloc & co. are served here instead of by glibc,
 * so that allocating and freeing never touch the program's (protected) view of the heap. Valgrind and DHAT
 * replace the allocator for the same reason.
 *
 * One memfd, as large as the heap may ever grow (HEAP_RESERVE, sparse), is mapped twice: the program's
 * view, which grows in HEAP_GROW steps into the traced set (MT_REGION_HEAP, already moved: its alias entry
 * is this heap's), and the agent's always-open alias view at a fixed distance. The allocator reads and
 * writes only through the alias (its free-list links inside free blocks, zeroing for calloc, realloc's
 * copy), and keeps everything else out of band: a word per page says which size class a page's slab
 * serves, or how many pages a large block has. So an allocation costs no fault and no system call but the
 * occasional growth, and the program's accesses to its blocks take the redirected route like any other
 * moved memory.
 *
 * Small blocks (up to SMALL_MAX bytes, 36 classes: multiples of 16 up to 128, then four steps per power of
 * two) come from 64 KiB slabs aligned to 64 KiB, so a power-of-two class is aligned to its size (memalign).
 * Larger blocks are runs of pages, first fit among the free runs (sorted, merged with their neighbours),
 * else from the top; a freed run of 128 KiB or more is given back to the kernel (MADV_REMOVE on the memfd),
 * like glibc's mmap'd chunks. The usable size of a block is its class's size or its pages'.
 *
 * One spinlock (heap.lock) guards it all; it is taken inside a critical section (the program's handlers
 * wait) and before g.lock when the heap grows. fork takes it around the call, so the child never inherits
 * it held; the child (which records nothing) gets private copies of the heap with the rest of the moved
 * memory (syscall.c), frees and resizes its old blocks in place (delta 0) and allocates from glibc.
 *
 * What it gets wrong: slabs are never given back, and a small block is never shrunk or moved to a smaller
 * class by realloc; there is no per-thread cache (two threads allocating at once take turns). A free or
 * realloc of a block already freed, or of an address that starts no block, is found (heap_check: an
 * allocated bit per small block, a freed large block's first page marked) and ends the program as glibc's
 * does (wrappers.c), but the message follows the block's class, not glibc's bins: a double free of a
 * request of 1025-1032 bytes says "double free or corruption (!prev)" where glibc's tcache would speak, the
 * eighth double free of a size glibc's full tcache bin passes on says the tcache message, and a block of
 * 128 KiB or more (mmapped by glibc, whose second free crashes with SIGSEGV) aborts; a slab's block
 * boundary that was never handed out counts as a freed block (glibc: "free(): invalid pointer"). Memory a program
 * wants beyond HEAP_RESERVE, or a heap whose reservation failed, comes from glibc by the old route
 * (wrappers.c), with its lazy page openings.
 */
#include "agent.h"

#define HEAP_RESERVE (32UL << 30)
/* Where the reservations are asked for: far from the executable and the libraries, whose out-of-line  */
/* copies need code-cache slots within 2 GiB of them (decode.c); the kernel's default place, right     */
/* below the libraries, would take that room.                                                          */
#define HEAP_HINT 0x200000000000UL
#define HEAP_GROW (4UL << 20)
#define SLAB (64UL << 10)
#define SMALL_MAX 16384
#define NCLASS 36
#define GIVE_BACK (128UL << 10)
#define PAGE_LARGE 0xffu /* low byte of a page's word: the first page of a large block (pages in the rest) */
#define PAGE_FREED 0xfeu /* low byte of a page's word: the first page of a freed large block, pages above */
#define TCACHE_MAX 1024  /* the largest class glibc would keep in its tcache (requests up to 1032 bytes) */

struct run { uintptr_t s, e; int dirty; };

static struct {
    spinlock lock;
    int on;                      /* new blocks come from here (memtrace attached, not a forked child) */
    uintptr_t base, end;         /* the program's view of the whole reservation */
    intptr_t delta;              /* alias minus program address; 0 in a forked child (private memory) */
    uintptr_t top;               /* pages above are untouched */
    uintptr_t grown;             /* the program's view is part of the traced set up to here */
    uint32_t *page;              /* per page: class + 1, PAGE_LARGE | pages << 8, or 0 */
    uintptr_t free_head[NCLASS];
    uintptr_t bump[NCLASS], bump_end[NCLASS];
    struct run *runs;
    int nruns, capruns;
    uint8_t *live;               /* a bit per 16 bytes: a small block starts there and is allocated */
} heap;

static uint32_t class_size[NCLASS];
static uint8_t class_of_16[SMALL_MAX / 16 + 1]; /* (n + 15) / 16 -> class */

static void init_classes(void)
{
    int c = 0;
    for (uint32_t s = 16; s <= 128; s += 16) class_size[c++] = s;
    for (uint32_t p = 128; p < SMALL_MAX; p *= 2)
        for (uint32_t k = 1; k <= 4; k++) class_size[c++] = p + p / 4 * k;
    for (uint32_t i = 0, k = 0; i <= SMALL_MAX / 16; i++) {
        while (class_size[k] < i * 16) k++;
        class_of_16[i] = (uint8_t)k;
    }
}

void heap_init(void)
{
    init_classes();
    long fd = mt_sys2(SYS_memfd_create, (long)"memtrace-heap", MFD_CLOEXEC);
    if (fd < 0) return;
    long view = -1, alias = -1;
    size_t pages = HEAP_RESERVE / (size_t)g.page;
    void *meta = agent_map(pages * sizeof(uint32_t));
    /* sparse: only the bytes of slabs in use are ever touched */
    long live = mt_sys6(SYS_mmap, 0, (long)(HEAP_RESERVE / 16 / 8), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mt_failed(live)) meta = NULL;
    else mt_own_add((void *)live, HEAP_RESERVE / 16 / 8);
    /* One SLAB more for the program's view, so that it can start at a SLAB boundary. */
    if (mt_sys2(SYS_ftruncate, fd, (long)HEAP_RESERVE) == 0 && meta) {
        view = mt_sys6(SYS_mmap, (long)HEAP_HINT, (long)(HEAP_RESERVE + SLAB), PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        alias = mt_sys6(SYS_mmap, (long)(HEAP_HINT + 2 * HEAP_RESERVE), (long)HEAP_RESERVE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    }
    uintptr_t b = mt_failed(view) ? 0 : ((uintptr_t)view + SLAB - 1) & ~(SLAB - 1);
    if (b && !mt_failed(alias) &&
        mt_sys6(SYS_mmap, (long)b, (long)HEAP_RESERVE, PROT_NONE, MAP_SHARED | MAP_FIXED | MAP_NORESERVE, fd, 0) == (long)b) {
        if (b > (uintptr_t)view) mt_sys2(SYS_munmap, view, (long)(b - (uintptr_t)view));
        if ((uintptr_t)view + SLAB > b) mt_sys2(SYS_munmap, (long)(b + HEAP_RESERVE), (long)((uintptr_t)view + SLAB - b));
        heap.base = heap.top = heap.grown = b;
        heap.end = b + HEAP_RESERVE;
        heap.delta = (intptr_t)((uintptr_t)alias - b);
        heap.page = meta;
        heap.live = (uint8_t *)live;
        heap.on = 1;
    } else {
        if (!mt_failed(view) && view != -1) mt_sys2(SYS_munmap, view, (long)(HEAP_RESERVE + SLAB));
        if (!mt_failed(alias) && alias != -1) mt_sys2(SYS_munmap, alias, (long)HEAP_RESERVE);
        if (meta) mt_sys2(SYS_munmap, (long)meta, (long)(pages * sizeof(uint32_t)));
        if (!mt_failed(live)) mt_sys2(SYS_munmap, live, (long)(HEAP_RESERVE / 16 / 8));
    }
    mt_sys1(SYS_close, fd);
}

int heap_serves(void) { return heap.on; }
int heap_owns(const void *p) { return (uintptr_t)p >= heap.base && (uintptr_t)p < heap.end; }
void *heap_alias(const void *p) { return (char *)p + heap.delta; }

/* Makes [grown, want) part of the program's heap: traced (moved already: its alias is ours) when the     */
/* heap is traced, readable and writable by the program otherwise. heap.lock held.                        */
static int grow(uintptr_t want)
{
    if (want <= heap.grown) return 1;
    if (want - heap.base > as_limit_heap()) return 0; /* the program's RLIMIT_AS (limits.c) */
    uintptr_t e = (want + HEAP_GROW - 1) & ~(HEAP_GROW - 1);
    if (e > heap.end) e = heap.end;
    if (want > e) return 0;
    enter_critical();
    spin_lock(&g.lock);
    if (!g.recording || !(g.regions & MT_REGION_HEAP))
        mt_sys3(SYS_mprotect, heap.grown, e - heap.grown, PROT_READ | PROT_WRITE);
    alias_adopt_locked(heap.grown, e, heap.delta, PROT_READ | PROT_WRITE);
    set_add_locked(heap.grown, e, PROT_READ | PROT_WRITE, MT_REGION_HEAP);
    spin_unlock(&g.lock);
    leave_critical();
    heap.grown = e;
    return 1;
}

static void runs_remove(int i)
{
    mt_memmove(&heap.runs[i], &heap.runs[i + 1], sizeof *heap.runs * (size_t)(heap.nruns - i - 1));
    heap.nruns--;
}

/* Adds [s, e) to the free runs, merged with its neighbours. 0 when the table could not grow (the pages */
/* are then lost to the heap, never to the program). heap.lock held.                                   */
static int runs_insert(uintptr_t s, uintptr_t e, int dirty)
{
    if (s >= e) return 1;
    int i = 0;
    while (i < heap.nruns && heap.runs[i].s < s) i++;
    if (i > 0 && heap.runs[i - 1].e == s) {
        heap.runs[i - 1].e = e;
        heap.runs[i - 1].dirty |= dirty;
        if (i < heap.nruns && heap.runs[i].s == e) {
            heap.runs[i - 1].e = heap.runs[i].e;
            heap.runs[i - 1].dirty |= heap.runs[i].dirty;
            runs_remove(i);
        }
        return 1;
    }
    if (i < heap.nruns && heap.runs[i].s == e) {
        heap.runs[i].s = s;
        heap.runs[i].dirty |= dirty;
        return 1;
    }
    if (heap.nruns == heap.capruns) {
        int cap = heap.capruns ? heap.capruns * 2 : 256;
        struct run *t = agent_map(sizeof *t * (size_t)cap);
        if (!t) return 0;
        if (heap.runs) {
            mt_memcpy(t, heap.runs, sizeof *t * (size_t)heap.nruns);
            mt_unmap_pages(heap.runs, sizeof *t * (size_t)heap.capruns);
        }
        heap.runs = t;
        heap.capruns = cap;
    }
    mt_memmove(&heap.runs[i + 1], &heap.runs[i], sizeof *heap.runs * (size_t)(heap.nruns - i));
    heap.runs[i] = (struct run){s, e, dirty};
    heap.nruns++;
    return 1;
}

/* n bytes (a page multiple) aligned to `al` (a power of two, at least a page): first fit among the free */
/* runs, else from the top. *dirty: the pages may hold old contents. 0 when the reservation is full.    */
static uintptr_t run_alloc(size_t n, size_t al, int *dirty)
{
    for (int i = 0; i < heap.nruns; i++) {
        struct run r = heap.runs[i];
        uintptr_t a = (r.s + al - 1) & ~(al - 1);
        if (a + n > r.e || a + n < a) continue;
        runs_remove(i);
        runs_insert(r.s, a, r.dirty);
        runs_insert(a + n, r.e, r.dirty);
        *dirty = r.dirty;
        return a;
    }
    uintptr_t a = (heap.top + al - 1) & ~(al - 1);
    if (a < heap.top || a + n < a || a + n > heap.end || !grow(a + n)) return 0;
    runs_insert(heap.top, a, 0);
    heap.top = a + n;
    *dirty = 0;
    return a;
}

static size_t page_index(uintptr_t p) { return (p - heap.base) / (size_t)g.page; }

/* A small block's allocated bit (its start is a multiple of 16 from the base). heap.lock held. */
static void set_live(uintptr_t p, int on)
{
    size_t bit = (p - heap.base) / 16;
    if (on) heap.live[bit / 8] |= (uint8_t)(1u << (bit % 8));
    else heap.live[bit / 8] &= (uint8_t)~(1u << (bit % 8));
}

static int is_live(uintptr_t p)
{
    size_t bit = (p - heap.base) / 16;
    return heap.live[bit / 8] >> (bit % 8) & 1;
}

static int small_class(size_t n, size_t al)
{
    if (al > 16) { /* a power-of-two class is aligned to its size inside its aligned slab */
        size_t s = n > al ? n : al, p = 16;
        while (p < s) p *= 2;
        n = p;
    }
    return n <= SMALL_MAX ? class_of_16[(n + 15) / 16] : -1;
}

/* A block of at least n bytes aligned to al (a power of two); *dirty says whether it may hold old     */
/* contents. NULL when the reservation is full.                                                       */
void *heap_alloc(size_t n, size_t al, int *dirty)
{
    int c = small_class(n, al);
    uintptr_t p = 0;
    PROF_BEGIN(t0);
    enter_critical();
    spin_lock(&heap.lock);
    if (c >= 0) {
        *dirty = 1;
        if (heap.free_head[c]) {
            p = heap.free_head[c];
            heap.free_head[c] = *(uintptr_t *)(p + (uintptr_t)heap.delta);
        } else {
            if (heap.bump[c] == heap.bump_end[c]) {
                int unused;
                uintptr_t slab = run_alloc(SLAB, SLAB, &unused);
                if (slab) {
                    for (size_t i = page_index(slab), k = 0; k < SLAB / (size_t)g.page; k++) heap.page[i + k] = (uint32_t)c + 1;
                    heap.bump[c] = slab;
                    heap.bump_end[c] = slab + SLAB / class_size[c] * class_size[c];
                }
            }
            if (heap.bump[c] < heap.bump_end[c]) {
                p = heap.bump[c];
                heap.bump[c] += class_size[c];
            }
        }
        if (p) set_live(p, 1);
    } else {
        size_t len = (n + (size_t)g.page - 1) & ~((size_t)g.page - 1);
        size_t pages = len / (size_t)g.page;
        if (len >= n && pages < (1UL << 24)) {
            p = run_alloc(len ? len : (size_t)g.page, al > (size_t)g.page ? al : (size_t)g.page, dirty);
            if (p) {
                size_t i = page_index(p), k = pages ? pages : 1;
                heap.page[i] = PAGE_LARGE | (uint32_t)k << 8;
                for (size_t j = 1; j < k; j++) heap.page[i + j] = 0; /* no freed block's mark inside this one */
            }
        }
    }
    spin_unlock(&heap.lock);
    leave_critical();
    PROF_END(PROF_HEAP, t0);
    return (void *)p;
}

/* The usable size of a block of ours (0 for an address that starts none). */
size_t heap_usable(const void *p)
{
    uint32_t w = heap.page[page_index((uintptr_t)p)];
    if ((w & 0xff) == PAGE_LARGE) return (size_t)(w >> 8) * (size_t)g.page;
    return w && (w & 0xff) != PAGE_FREED ? class_size[w - 1] : 0;
}

/* What freeing a would be. heap.lock held. */
static enum heap_bad check_locked(uintptr_t a)
{
    uint32_t w = heap.page[page_index(a)];
    if ((w & 0xff) == PAGE_LARGE) return a == page_down(a) ? HEAP_OK : HEAP_INVALID;
    if ((w & 0xff) == PAGE_FREED) {
        if (a != page_down(a)) return HEAP_INVALID;
        return (size_t)(w >> 8) * (size_t)g.page >= GIVE_BACK ? HEAP_FREED_MAPPED : HEAP_FREED;
    }
    if (!w) return HEAP_INVALID;
    uintptr_t slab = a & ~(SLAB - 1);
    uint32_t cs = class_size[w - 1];
    if ((a - slab) % cs || a >= slab + SLAB / cs * cs) return HEAP_INVALID;
    if (!is_live(a)) return cs <= TCACHE_MAX ? HEAP_FREED_TCACHE : HEAP_FREED;
    return HEAP_OK;
}

enum heap_bad heap_check(const void *p)
{
    enter_critical();
    spin_lock(&heap.lock);
    enum heap_bad bad = check_locked((uintptr_t)p);
    spin_unlock(&heap.lock);
    leave_critical();
    return bad;
}

enum heap_bad heap_free(void *p)
{
    uintptr_t a = (uintptr_t)p;
    PROF_BEGIN(t0);
    enter_critical();
    spin_lock(&heap.lock);
    enum heap_bad bad = check_locked(a);
    size_t i = page_index(a);
    uint32_t w = heap.page[i];
    if (bad) {
        /* left alone: the caller ends the program */
    } else if ((w & 0xff) == PAGE_LARGE) {
        size_t len = (size_t)(w >> 8) * (size_t)g.page;
        heap.page[i] = PAGE_FREED | (w & ~0xffu); /* a second free is told from an invalid one */
        int dirty = 1;
        if (len >= GIVE_BACK) {
            /* both views read zeroes afterwards, as a new mapping would */
            if (heap.delta) dirty = mt_sys3(SYS_madvise, a + (uintptr_t)heap.delta, (long)len, MADV_REMOVE) != 0;
        }
        runs_insert(a, a + len, dirty);
    } else {
        set_live(a, 0);
        *(uintptr_t *)(a + (uintptr_t)heap.delta) = heap.free_head[w - 1];
        heap.free_head[w - 1] = a;
    }
    spin_unlock(&heap.lock);
    leave_critical();
    PROF_END(PROF_HEAP, t0);
    return bad;
}

/* fork: the child must not inherit the lock held by another thread (which vanishes in the child). */
void heap_fork_prepare(void)
{
    if (heap.base) spin_lock(&heap.lock);
}

/* After fork: the child's heap is private memory now (its alias view is gone), and it records nothing: */
/* new blocks come from glibc, its old ones are freed and resized in place.                             */
void heap_fork_done(int child)
{
    if (!heap.base) return;
    if (child) {
        heap.on = 0;
        heap.delta = 0;
    }
    spin_unlock(&heap.lock);
}
