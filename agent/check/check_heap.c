/*
 * check_heap.c: the allocator of `memtrace cc --check`: malloc, calloc, realloc, free, the aligned
 * allocators, malloc_usable_size and C++'s operators new and delete (plain, array, nothrow, sized, aligned),
 * all on top of glibc's own (__libc_memalign, __libc_free).
 *
 * A block is [left redzone | the requested bytes | right redzone]: the last 64 bytes of the left redzone hold
 * its header (struct mc_block), so the block of a pointer is found from the shadow alone. The right redzone
 * grows with the size (32 bytes to 2 KB). free checks what it is given: NULL is fine; a pointer whose header
 * says live is released (its family must match: malloc with free, new with delete, new[] with delete[]); a
 * header in quarantine is a double free; anything else is an invalid free, named by what the address is
 * (a stack or global variable, the middle of a block, nothing known). A released block's bytes are poisoned
 * and it waits in a FIFO quarantine (MEMTRACE_CHECK_QUARANTINE bytes, default 64 MB) before it is reused,
 * so that a use after free is caught even after more allocations; the oldest blocks leave it early, down to
 * 4 MB of chunks, when the arena would otherwise grow. The layout, lists and leak scan are
 * check_block.h's, which the agent's `memtrace run --check` (check_run.c) shares.
 *
 * Leaks at exit (LeakSanitizer's definition): every live block not reachable from a root through pointers
 * (interior pointers count) is a leak, except the dynamic loader's own (threads' TLS vectors). Roots: the
 * writable segments of every loaded module, the calling thread's thread-local variables of every module, its
 * stack from its stack pointer up, registers included by being spilled into that stack, every other running
 * thread's static TLS and DTV (the threads the runtime registered: pthread_create's), and the program's own
 * anonymous mappings (check_block.h, mc_scan_anon: other threads' stacks and TLS, memory it mmap'd itself)
 * but for memtrace's own ranges and the blocks in glibc's chunks.
 *
 * What it gets wrong: registers of other threads still running at exit are not roots; a use after free of a block
 * freed more than 4 MB of chunks ago, in a program that keeps allocating, may land in a reused chunk and go
 * unseen (ASan's quarantine has the same limit at 256 MB); a block whose header a
 * wild write destroyed is reported as an invalid free. glibc's own metadata between two blocks is not
 * poisoned beyond the redzones.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stddef.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "check_block.h"
#include "check_scan.h"

extern void *__libc_memalign(size_t align, size_t size);
extern void __libc_free(void *p);

#define LEFT 64
#define LARGE (128u << 10)

static pthread_mutex_t heap_lock = PTHREAD_MUTEX_INITIALIZER;

/* glibc's flag: the process has never had a second thread (cleared by pthread_create before the thread runs;
 * weak, so a libc without it means "threads"). malloc and free take heap_lock only once it is clear, as glibc's
 * own malloc skips its atomics: the lock and unlock were 7 % of bench/programs/heap.c's checked run. */
extern char __libc_single_threaded __attribute__((weak));

static int heap_take(void)
{
    if (&__libc_single_threaded && __libc_single_threaded) return 0;
    pthread_mutex_lock(&heap_lock);
    return 1;
}

static void heap_give(int held)
{
    if (held) pthread_mutex_unlock(&heap_lock);
}
static struct mc_lists lists = {.q_limit = 64u << 20};   /* the live list, the quarantine (check_block.h) */

/* The arena grows only when the quarantine holds at most this many bytes of its chunks (below). */
static size_t recycle_floor = 4u << 20;

void mc_set_quarantine(size_t bytes)
{
    lists.q_limit = bytes;
    recycle_floor = bytes / 16;
}

/* The calling thread's id for block headers: gettid() is a system call, so it is asked once per thread (a
 * forked child forgets the value its parent's thread had). Measured on bench/programs/heap.c (400 rounds): the
 * checked run took 0.68 s with a gettid() per allocation, 0.23 s with this (bench/results/check.md). */
static __thread uint32_t cached_tid __attribute__((tls_model("initial-exec")));
static pthread_once_t tid_once = PTHREAD_ONCE_INIT;
static void forget_tid(void) { cached_tid = 0; }
static void tid_at_fork(void) { pthread_atfork(NULL, NULL, forget_tid); }

static uint32_t thread_id(void)
{
    if (!cached_tid) {
        pthread_once(&tid_once, tid_at_fork);
        cached_tid = (uint32_t)gettid();
    }
    return cached_tid;
}

/* ---- the arena: chunks of small blocks ----
 * Blocks whose chunk (redzones included) is at most ARENA_MAX bytes and whose alignment is 16 come from one
 * reserved mapping asking for transparent huge pages, in size classes with a free list each, bump-allocated
 * when the list is empty. Why not glibc: the quarantine keeps freed chunks from coming back, so a program that
 * frees and allocates small blocks touches new memory all the time, and each new 4 KB page is a page fault
 * (3.4 us on this machine kind). Measured on bench/programs/heap.c (400 K malloc/free pairs), where 65 % of
 * the checked run was those faults: bench/results/check.md. A chunk the quarantine lets go keeps its shadow
 * (left redzone, freed bytes, right redzone; the header's magic cleared), so an access to it is still caught
 * until it is handed out again; allocate() writes the whole chunk's shadow. */
#define ARENA_MAX (64u << 10)
#define ARENA_SIZE ((size_t)64 << 30)
#define ARENA_CLASSES (64 + 6 * 4)
static uintptr_t arena_base, arena_top, arena_end;
/* The arena is reserved inaccessible and opened (read-write) ARENA_STEP bytes at a time as arena_top reaches
 * arena_open: an index far past a block (`p[rand()]`, Juliet's CWE129_rand) then faults, a wild access, as
 * natively and under ASan, where a read-write reservation let it write silently into shadow-0 memory. */
#define ARENA_STEP ((uintptr_t)32 << 20)
static uintptr_t arena_open;
static void *arena_free[ARENA_CLASSES];

/* The class of a chunk of total bytes (at most ARENA_MAX) and, through *bytes, its size: 16-byte steps to
 * 1 KB, then four steps per doubling. */
static inline __attribute__((always_inline)) unsigned arena_class(size_t total, size_t *bytes)
{
    if (total <= 1024) {
        unsigned c = (unsigned)((total + 15) >> 4);
        *bytes = (size_t)c << 4;
        return c - 1;
    }
    unsigned k = 63 - __builtin_clzll(total - 1);          /* 2^k < total <= 2^(k+1), k >= 10 */
    size_t step = (size_t)1 << (k - 2);
    size_t q = (total - 1 - ((size_t)1 << k)) / step;      /* 0..3 */
    *bytes = ((size_t)1 << k) + (q + 1) * step;
    return 64 + (k - 10) * 4 + (unsigned)q;
}

static void arena_init(void)
{
    void *m = mmap(NULL, ARENA_SIZE + (2u << 20), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) { arena_end = 1; return; }     /* glibc for every block */
    mt_own_add(m, ARENA_SIZE + (2u << 20));
    arena_base = arena_top = arena_open = ((uintptr_t)m + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1);
    arena_end = arena_base + ARENA_SIZE;
    if (!mc_addressable_range(arena_base) || !mc_addressable_range(arena_end - 1)) {
        mt_own_remove(m, ARENA_SIZE + (2u << 20));
        munmap(m, ARENA_SIZE + (2u << 20));
        arena_base = arena_top = 0;
        arena_end = 1;
        return;
    }
    (void)madvise((void *)arena_base, ARENA_SIZE, MADV_HUGEPAGE);
    (void)madvise(MC_SHADOW(arena_base), ARENA_SIZE >> 3, MADV_HUGEPAGE);
}

/* The bytes from a block's chunk to the end of its right redzone: what allocate() poisoned. */
static size_t chunk_extent(const struct mc_block *b)
{
    uintptr_t user = (uintptr_t)(b + 1);
    size_t body = (b->size + 7) & ~(size_t)7;
    return user - (uintptr_t)b->chunk + body + (b->size >= LARGE ? 16384 : mc_right_redzone(b->size));
}

/* ---- the quarantine recycles ----
 * A quarantine of 64 MB that only lets go when it is full makes a program that frees and allocates small
 * blocks run through fresh memory until then: bench/programs/heap.c's 400 K pairs of 16-byte blocks (112-byte
 * chunks, 45 MB) never reused a chunk, and 77 % of its checked run was the kernel zeroing the arena's new pages
 * (perf, clear_page_erms). So the arena grows only when the quarantine holds no more than recycle_floor bytes
 * of arena chunks (a sixteenth of MEMTRACE_CHECK_QUARANTINE: 4 MB): before that, the oldest blocks leave the
 * quarantine (arena chunks to their free lists, glibc's to glibc) until the class asked for has a chunk. A use
 * after free is still caught for at least the last 4 MB of freed chunks (some 37,000 blocks of 16 bytes), and
 * for up to the whole quarantine when no allocation needs the memory. heap.c's checked run: 0.0213 -> 0.0176 s
 * CPU (least of 15, load 23; floors of 1 MB 0.0171, none 0.0158; bench/results/check.md). */
static size_t q_arena;                  /* bytes of arena chunks (their classes' sizes) in the quarantine */

/* The bytes of a chunk of class c (arena_class's *bytes). */
static size_t class_bytes(unsigned c)
{
    if (c < 64) return (size_t)(c + 1) << 4;
    unsigned k = 10 + (c - 64) / 4;
    return ((size_t)1 << k) + (size_t)((c - 64) % 4 + 1) * ((size_t)1 << (k - 2));
}

/* A block the quarantine let go of: an arena chunk back to its class's list (under heap_lock), glibc's onto
 * *to_libc for free_to_libc once the lock is given back. A free chunk's first word links its class's list: it
 * overwrites the header's magic (0 since the quarantine let go of it; a 16-aligned pointer's low half is
 * neither magic), so the chunk stays no block. */
static void let_go(struct mc_block *o, struct mc_block **to_libc)
{
    if (o->arena_class) {
        unsigned c = o->arena_class - 1u;
        q_arena -= class_bytes(c);
        *(void **)o->chunk = arena_free[c];
        arena_free[c] = o->chunk;
    } else {
        o->next = *to_libc;
        *to_libc = o;
    }
}

static void free_to_libc(struct mc_block *o)
{
    while (o) {
        struct mc_block *next = o->next;
        /* glibc may hand the chunk to anyone now, the runtime's own __libc_memalign included (the leak scan's
         * arrays, which its wrapped memset checks): shadow that still said "freed" made MEMTRACE_CHECK_QUARANTINE=0
         * report a wild access at exit. A block allocated there poisons its redzones again. */
        mc_unpoison((uintptr_t)o->chunk, chunk_extent(o));
        __libc_free(o->chunk);
        o = next;
    }
}

/* A chunk of the class of total bytes (its class through *c, its size through *bytes), or NULL (the arena is
 * full or missing); the caller holds heap_lock. Blocks the quarantine let go of to find one are put on *to_libc
 * when they are glibc's. */
static void *arena_take(size_t total, unsigned *c_out, size_t *bytes, struct mc_block **to_libc)
{
    if (!arena_end) arena_init();
    unsigned c = *c_out = arena_class(total, bytes);
    while (!arena_free[c] && q_arena > recycle_floor) let_go(mc_quarantine_pop(&lists, mc_view_self), to_libc);
    void *p = arena_free[c];
    if (p) {
        arena_free[c] = *(void **)p;
        return p;
    }
    if (arena_end - arena_top < *bytes) return NULL;
    if (arena_top + *bytes > arena_open) {
        uintptr_t to = (arena_top + *bytes + ARENA_STEP - 1) & ~(ARENA_STEP - 1);
        if (to > arena_end) to = arena_end;
        if (mprotect((void *)arena_open, to - arena_open, PROT_READ | PROT_WRITE) != 0) return NULL;
        arena_open = to;
    }
    p = (void *)arena_top;
    arena_top += *bytes;
    return p;
}

/* A small chunk's shadow (left redzone, the requested bytes, right redzone: at most SMALL_CHUNK / 8 bytes) in
 * word stores here, not three calls of mc_poison/mc_unpoison: bench/programs/heap.c's 400 K malloc/free pairs
 * spend about 40 ns each in this allocator against glibc's 11 (bench/results/check.md, 2026-12-06). */
#define SMALL_CHUNK 1024u
static inline void small_fill(uint8_t *s, uint8_t value, size_t n)
{
    uint64_t w = value * 0x0101010101010101ULL;
    for (; n >= 8; n -= 8, s += 8) __builtin_memcpy(s, &w, 8);
    for (; n; n--) *s++ = value;
}

static inline void small_shadow(uintptr_t chunk, size_t left, size_t size, size_t total)
{
    uint8_t *s = MC_SHADOW(chunk);
    size_t l = left >> 3, full = size >> 3, body = (size + 7) >> 3;
    small_fill(s, MC_HEAP_LEFT, l);
    small_fill(s + l, 0, full);
    if (size & 7) s[l + full] = (uint8_t)(size & 7);
    small_fill(s + l + body, MC_HEAP_RIGHT, (total >> 3) - l - body);
}

static void *allocate(size_t size, size_t align, uint8_t family, uint8_t fn, const void *pc)
{
    mc_init();
    if (align < 16) align = 16;
    size_t left = align > LEFT ? align : LEFT;
    /* a large block (glibc mmaps it) gets 16 KB redzones: a read 4,000 bytes before a 1 MB block is caught */
    if (size >= LARGE && left < 16384) left = 16384;
    size_t body = (size + 7) & ~(size_t)7;
    size_t total = left + body + (size >= LARGE ? 16384 : mc_right_redzone(size));
    if (size > ((size_t)1 << 46) || total < size) {
        errno = ENOMEM;
        return NULL;
    }
    uint32_t tid = thread_id();     /* before the lock: its first call registers a fork handler, which allocates */
    /* one lock for the chunk and the live list (glibc's allocator does not call back into this one) */
    int held = heap_take();
    char *chunk = NULL;
    struct mc_block *to_libc = NULL;
    uint16_t cls = 0;
    if (total <= ARENA_MAX && align == 16) {
        size_t bytes;
        unsigned c;
        chunk = arena_take(total, &c, &bytes, &to_libc);
        if (chunk) {
            total = bytes;     /* the class's slack is right redzone too */
            cls = (uint16_t)(c + 1);
        }
    }
    if (!chunk) chunk = __libc_memalign(align, total);
    if (!chunk) {
        heap_give(held);
        free_to_libc(to_libc);
        return NULL;
    }
    uintptr_t user = (uintptr_t)chunk + left;
    struct mc_block *b = (struct mc_block *)(user - sizeof *b);
    b->size = size;
    b->chunk = chunk;
    b->alloc_pc = pc;
    b->free_pc = NULL;
    b->family = family;
    b->fn = fn;
    b->tid = tid;
    b->arena_class = cls;
    if (total <= SMALL_CHUNK) {
        small_shadow((uintptr_t)chunk, left, size, total);
    } else {
        mc_poison((uintptr_t)chunk, left, MC_HEAP_LEFT);
        mc_unpoison(user, size);
        mc_poison(user + body, total - left - body, MC_HEAP_RIGHT);
    }
    mc_link_live(&lists, b, mc_view_self);
    heap_give(held);
    free_to_libc(to_libc);
    return (void *)user;
}

/* The header of a block the pointer starts, live or in quarantine; NULL when p starts none. */
__attribute__((target("general-regs-only")))
static struct mc_block *header_at(uintptr_t p)
{
    if ((p & 15) || !mc_addressable_range(p) || p < LEFT) return NULL;
    return mc_header_at(p, mc_view_self);
}

struct mc_block *mc_block_of(uintptr_t addr, int *inside)
{
    if (!mc_addressable_range(addr)) return NULL;
    uintptr_t g = addr & ~(uintptr_t)7;
    uint8_t v = *MC_SHADOW(g);
    if (v == MC_HEAP_LEFT) {
        /* before a block: its start is the first granule past the left redzone */
        for (int i = 0; i < 8192 && *MC_SHADOW(g) == MC_HEAP_LEFT; i++) g += 8;
        struct mc_block *b = header_at(g);
        if (b) *inside = 0;
        return b;
    }
    /* in a block or after it: walk back to its left redzone */
    for (int i = 0; i < (1 << 20); i++) {
        uint8_t s = *MC_SHADOW(g);
        if (s == MC_HEAP_LEFT) {
            struct mc_block *b = header_at(g + 8);
            if (b) *inside = addr < (uintptr_t)(b + 1) + b->size;
            return b;
        }
        if (s != 0 && s >= 0x80 && s != MC_HEAP_RIGHT && s != MC_HEAP_FREED) return NULL;
        if (g < 8) return NULL;
        g -= 8;
    }
    return NULL;
}

/* the shadow word of the 64 bytes from g (any alignment) */
__attribute__((target("general-regs-only")))
static inline uint64_t shadow_word(uintptr_t g)
{
    uint64_t w;
    __builtin_memcpy(&w, MC_SHADOW(g), 8);
    return w;
}

/* The live block whose requested bytes hold p, or NULL: a walk back over the block's shadow, 32 or eight
 * granules a step while they are all addressable, at most `limit` bytes back (a pointer deep inside a large block is
 * given up on: no block). Spindle's object-level check of a loop (check_shadow.c) asks it once per entry,
 * where only the general registers are saved (an unchecked vectorised body keeps values in the others). */
__attribute__((target("general-regs-only")))
const struct mc_block *mc_live_block(uintptr_t p, size_t limit)
{
    if (!mc_addressable_range(p) || p < LEFT + 64) return NULL;
    uintptr_t g = p & ~(uintptr_t)7, stop = p - (limit < p - LEFT ? limit : p - LEFT);
    if (*MC_SHADOW(g) >= 0x80) return NULL;
    while (g >= stop) {                       /* g's granule is addressable */
        uint8_t s = *MC_SHADOW(g - 8);
        if (s == MC_HEAP_LEFT) {
            struct mc_block *b = header_at(g);
            return b && b->magic == MC_LIVE && p < g + b->size ? b : NULL;
        }
        if (s != 0) return NULL;              /* another object's end or a redzone not a heap block's */
        g -= 8;
        /* all-addressable shadow is skipped 256 bytes (four shadow words) a step, then 64, from any alignment:
         * the index test's walks from a base deep in one of sqlite3's large blocks went to the 4 KB limit a
         * word at a time, and that walk was 1.4 % of its checked run (bench/results/check.md, 2026-12-07 20:35) */
        while (g >= stop + 256 && (shadow_word(g - 256) | shadow_word(g - 192) | shadow_word(g - 128) | shadow_word(g - 64)) == 0)
            g -= 256;
        while (g >= stop + 64 && shadow_word(g - 64) == 0) g -= 64;
    }
    return NULL;
}

static void release(void *p, uint8_t family, const void *pc)
{
    if (!p) return;
    mc_init();
    uintptr_t u = (uintptr_t)p;
    int held = heap_take();
    struct mc_block *b = header_at(u);
    if (!b || b->magic != MC_LIVE) {
        heap_give(held);
        if (b) {
            mc_report_free("double free", u, b, pc, mc_release_name(family));
        } else {
            mc_report_free("invalid free", u, NULL, pc, mc_release_name(family));
        }
        return;
    }
    if (b->family != family) {
        heap_give(held);
        mc_report_free("allocator mismatch", u, b, pc, mc_release_name(family));
        held = heap_take();
        if (b->magic != MC_LIVE) { heap_give(held); return; }
    }
    mc_unlink_live(&lists, b, mc_view_self);
    if (b->arena_class) q_arena += class_bytes(b->arena_class - 1u);
    struct mc_block *out = mc_quarantine(&lists, b, pc, mc_view_self), *to_libc = NULL;
    while (out) {
        struct mc_block *o = out;
        out = o->next;
        let_go(o, &to_libc);
    }
    heap_give(held);
    free_to_libc(to_libc);
}

const char *mc_family_name(int f) { return mc_alloc_name(f); }

/* the program's call: the return address, or, when that lies in the C++ library's allocation plumbing (a
 * container's allocator), the first caller that does not (check_callers.c) */
#define CALLER mc_user_frame(__builtin_return_address(0), (uintptr_t)__builtin_frame_address(0))

/* while a stream scanf runs on this thread (check_scan.h, mc_fscan_run), glibc's mallocs for its %m buffers */
__thread struct mc_arena *mc_arena_now __attribute__((tls_model("initial-exec")));

MC_EXPORT void *malloc(size_t n)
{
    if (__builtin_expect(mc_arena_now != NULL, 0)) return mc_arena_malloc(mc_arena_now, n);
    return allocate(n, 16, MC_MALLOC, 0, CALLER);
}
MC_EXPORT void free(void *p)
{
    if (__builtin_expect(mc_arena_now != NULL, 0) && mc_arena_owns(mc_arena_now, p)) return mc_arena_free(mc_arena_now, p);
    release(p, MC_MALLOC, CALLER);
}
MC_EXPORT void cfree(void *p) { release(p, MC_MALLOC, CALLER); }

MC_EXPORT void *calloc(size_t n, size_t m)
{
    size_t total;
    if (__builtin_mul_overflow(n, m, &total)) { errno = ENOMEM; return NULL; }
    void *p = allocate(total, 16, MC_MALLOC, 1, CALLER);
    if (p) memset(p, 0, total);
    return p;
}

static void *reallocate(void *old, size_t n, const void *pc)
{
    if (!old) return allocate(n, 16, MC_MALLOC, 2, pc);
    struct mc_block *b = header_at((uintptr_t)old);
    if (!b || b->magic != MC_LIVE) {
        mc_report_free(b ? "double free" : "invalid free", (uintptr_t)old, b, pc, "realloc");
        return NULL;
    }
    if (b->family != MC_MALLOC) mc_report_free("allocator mismatch", (uintptr_t)old, b, pc, "realloc");
    /* glibc frees the block and returns NULL (REALLOC_ZERO_BYTES_FREES), as run --check's check_realloc does:
     * a caller that takes NULL for "failed, old still valid" and frees old again double-frees natively too */
    if (n == 0) {
        release(old, b->family, pc);
        return NULL;
    }
    void *p = allocate(n, 16, MC_MALLOC, 2, pc);
    if (!p) return NULL;
    memcpy(p, old, b->size < n ? b->size : n);
    release(old, b->family, pc);
    return p;
}

MC_EXPORT void *realloc(void *old, size_t n)
{
    if (__builtin_expect(mc_arena_now != NULL, 0) && (!old || mc_arena_owns(mc_arena_now, old)))
        return mc_arena_realloc(mc_arena_now, old, n);
    return reallocate(old, n, CALLER);
}

MC_EXPORT void *reallocarray(void *old, size_t n, size_t m)
{
    size_t total;
    if (__builtin_mul_overflow(n, m, &total)) { errno = ENOMEM; return NULL; }
    return reallocate(old, total, CALLER);
}

MC_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
    if (align < sizeof(void *) || (align & (align - 1))) return EINVAL;
    void *p = allocate(n, align, MC_MALLOC, 3, CALLER);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

MC_EXPORT void *aligned_alloc(size_t align, size_t n)
{
    if (align == 0 || (align & (align - 1))) { errno = EINVAL; return NULL; }
    return allocate(n, align, MC_MALLOC, 3, CALLER);
}

MC_EXPORT void *memalign(size_t align, size_t n)
{
    if (align == 0 || (align & (align - 1))) { errno = EINVAL; return NULL; }
    return allocate(n, align, MC_MALLOC, 3, CALLER);
}

MC_EXPORT void *valloc(size_t n) { return allocate(n, 4096, MC_MALLOC, 3, CALLER); }
MC_EXPORT void *pvalloc(size_t n) { return allocate((n + 4095) & ~(size_t)4095, 4096, MC_MALLOC, 3, CALLER); }

MC_EXPORT size_t malloc_usable_size(void *p)
{
    struct mc_block *b = p ? header_at((uintptr_t)p) : NULL;
    return b && b->magic == MC_LIVE ? b->size : 0;
}

/* C++: failing new aborts with a line (the runtime cannot throw std::bad_alloc from C). */
static void *new_or_die(size_t n, size_t align, uint8_t family, const void *pc)
{
    void *p = allocate(n, align, family, 4, pc);
    if (!p) {
        static const char msg[] = "memtrace: check: operator new: out of memory\n";
        (void)!write(2, msg, sizeof msg - 1);
        abort();
    }
    return p;
}

MC_EXPORT void *_Znwm(size_t n) { return new_or_die(n, 16, MC_NEW, CALLER); }
MC_EXPORT void *_Znam(size_t n) { return new_or_die(n, 16, MC_NEW_ARRAY, CALLER); }
MC_EXPORT void *_ZnwmRKSt9nothrow_t(size_t n, const void *t) { return allocate(n, 16, MC_NEW, 4, CALLER); }
MC_EXPORT void *_ZnamRKSt9nothrow_t(size_t n, const void *t) { return allocate(n, 16, MC_NEW_ARRAY, 4, CALLER); }
MC_EXPORT void *_ZnwmSt11align_val_t(size_t n, size_t a) { return new_or_die(n, a, MC_NEW, CALLER); }
MC_EXPORT void *_ZnamSt11align_val_t(size_t n, size_t a) { return new_or_die(n, a, MC_NEW_ARRAY, CALLER); }
MC_EXPORT void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t a, const void *t) { return allocate(n, a, MC_NEW, 4, CALLER); }
MC_EXPORT void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t a, const void *t) { return allocate(n, a, MC_NEW_ARRAY, 4, CALLER); }
MC_EXPORT void _ZdlPv(void *p) { release(p, MC_NEW, CALLER); }
MC_EXPORT void _ZdaPv(void *p) { release(p, MC_NEW_ARRAY, CALLER); }
MC_EXPORT void _ZdlPvm(void *p, size_t n) { release(p, MC_NEW, CALLER); }
MC_EXPORT void _ZdaPvm(void *p, size_t n) { release(p, MC_NEW_ARRAY, CALLER); }
MC_EXPORT void _ZdlPvRKSt9nothrow_t(void *p, const void *t) { release(p, MC_NEW, CALLER); }
MC_EXPORT void _ZdaPvRKSt9nothrow_t(void *p, const void *t) { release(p, MC_NEW_ARRAY, CALLER); }
MC_EXPORT void _ZdlPvSt11align_val_t(void *p, size_t a) { release(p, MC_NEW, CALLER); }
MC_EXPORT void _ZdaPvSt11align_val_t(void *p, size_t a) { release(p, MC_NEW_ARRAY, CALLER); }
MC_EXPORT void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t a) { release(p, MC_NEW, CALLER); }
MC_EXPORT void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t a) { release(p, MC_NEW_ARRAY, CALLER); }

/* ---- leaks ---- */

/* the stack of blocks to scan grows in glibc's memory (the runtime links libc) */
static int grow_stack(struct mc_scan *s)
{
    size_t cap = s->cap ? 2 * s->cap : 1024;
    size_t *grown = __libc_memalign(16, cap * sizeof *grown);
    if (!grown) return 0;
    if (s->stack) { memcpy(grown, s->stack, s->depth * sizeof *grown); __libc_free(s->stack); }
    s->stack = grown;
    s->cap = cap;
    return 1;
}

static int may_point(uintptr_t v) { return v >= 4096; }

/* Whether the module holds this runtime's own data: its .bss (some 800 KB of tables: globals, sites, the
 * report's caches) holds no pointer to a program's block (the live list and the quarantine point at headers,
 * below the blocks' starts, and nothing of the runtime allocates from this heap), and scanning it was 4 % of
 * bench/programs/heap.c's checked run, 3 % of matmul's (perf record, its pages faulted in only to be read). */
static int is_runtime(const struct dl_phdr_info *info)
{
    uintptr_t own = (uintptr_t)&lists;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && own - a < ph->p_memsz) return 1;
    }
    return 0;
}

/* The modules' blocks in static TLS, as offsets below the thread pointer (the same in every thread: x86-64's
 * TLS variant II) with their lengths; dlopen'd modules outside it get their blocks from the loader's malloc,
 * found through the DTV (below). */
#define TLS_MODULES 64
struct tls_layout {
    struct mc_scan *s;
    uintptr_t tp, static_size, off[TLS_MODULES], len[TLS_MODULES];
    int n;
};

static int scan_module(struct dl_phdr_info *info, size_t size, void *data)
{
    struct tls_layout *t = data;
    if (is_runtime(info)) return 0;
    mc_scan_module(t->s, info, size, 1);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_TLS || size < offsetof(struct dl_phdr_info, dlpi_tls_data) + sizeof(void *)) continue;
        uintptr_t a = (uintptr_t)info->dlpi_tls_data;
        if (a && a < t->tp && t->tp - a <= t->static_size && t->n < TLS_MODULES) {
            t->off[t->n] = t->tp - a;
            t->len[t->n++] = ph->p_memsz;
        }
    }
    return 0;
}

/* Another running thread's TLS as a root (LeakSanitizer's: __thread void *p = malloc(..) in a thread still
 * running at exit is reachable): each module's block in its static TLS, and the thread control block's first
 * words, whose DTV pointer leads (through the loader's blocks, scanned once reached) to its dynamic TLS. Not
 * left to the scan of anonymous memory: a thread's stack and TLS are not always there (a stack the program
 * gave it, a mapping cut as memtrace's own). */
static void scan_thread_tls(uintptr_t tp, void *arg)
{
    struct tls_layout *t = arg;
    for (int i = 0; i < t->n; i++) mc_scan_range(t->s, tp - t->off[i], tp - t->off[i] + t->len[i]);
    mc_scan_range(t->s, tp, tp + 2 * sizeof(void *));
}

/* The dynamic loader's own allocations (threads' TLS vectors, which only thread descriptors in glibc's stack
 * cache point to) are not the program's leaks; LeakSanitizer leaves them out too. */
static int from_loader(const void *pc)
{
    Dl_info info;
    return dladdr(pc, &info) && info.dli_fname && strstr(info.dli_fname, "/ld-linux");
}

/* The blocks in glibc's chunks (past ARENA_MAX, or no arena), live and in quarantine, sorted by address: what
 * the scan of the program's anonymous mappings cuts out (glibc maps a large chunk as one). */
static struct mc_block **glibc_blocks;
static size_t glibc_n;

static uintptr_t glibc_chunk_end(const struct mc_block *b) { return (uintptr_t)b->chunk + chunk_extent(b); }

static uintptr_t glibc_cut(uintptr_t at, uintptr_t e, uintptr_t *end)
{
    size_t lo = 0, hi = glibc_n;        /* the first chunk ending past at */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (glibc_chunk_end(glibc_blocks[mid]) <= at) lo = mid + 1; else hi = mid;
    }
    if (lo == glibc_n || (uintptr_t)glibc_blocks[lo]->chunk >= e) return e;
    *end = glibc_chunk_end(glibc_blocks[lo]);
    return (uintptr_t)glibc_blocks[lo]->chunk > at ? (uintptr_t)glibc_blocks[lo]->chunk : at;
}

static void collect_glibc_blocks(void)
{
    size_t n = 0;
    for (struct mc_block *b = lists.live; b; b = b->next) n += b->arena_class == 0;
    for (struct mc_block *b = lists.q_head; b; b = b->next) n += b->arena_class == 0;
    glibc_blocks = n ? __libc_memalign(16, n * sizeof *glibc_blocks) : NULL;
    glibc_n = 0;
    if (!glibc_blocks) return;
    for (struct mc_block *b = lists.live; b; b = b->next) if (b->arena_class == 0) glibc_blocks[glibc_n++] = b;
    for (struct mc_block *b = lists.q_head; b; b = b->next) if (b->arena_class == 0) glibc_blocks[glibc_n++] = b;
    mc_sort_blocks(glibc_blocks, glibc_n);
}

/* a fake frame in use (check_fakestack.c) holds locals, as the stack does */
static void scan_fake_frame(void *s, uintptr_t from, uintptr_t to) { mc_scan_range(s, from, to); }

/* Called at exit: reports unreachable live blocks, grouped by allocation site, largest first. */
__attribute__((noinline)) void mc_leak_check(void)
{
    /* the stack's extent first: pthread_getattr_np allocates */
    pthread_attr_t attr;
    void *base = NULL;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        if (pthread_attr_getstack(&attr, &base, &size) != 0) base = NULL;
        pthread_attr_destroy(&attr);
    }
    /* static TLS's size bounds which modules' blocks are there (glibc's private call, as LeakSanitizer asks it;
     * looked up before the lock: dlsym may allocate) */
    static void (*static_info)(size_t *size, size_t *align);
    if (!static_info) static_info = (void (*)(size_t *, size_t *))dlsym(RTLD_DEFAULT, "_dl_get_tls_static_info");
    struct tls_layout tls = {.n = 0};
    if (static_info) {
        size_t ssize = 0, salign = 0;
        static_info(&ssize, &salign);
        tls.static_size = ssize;
    }
    __asm__("mov %%fs:0, %0" : "=r"(tls.tp));
    pthread_mutex_lock(&heap_lock);
    size_t n = 0;
    for (struct mc_block *b = lists.live; b; b = b->next) n++;
    if (n == 0) { pthread_mutex_unlock(&heap_lock); return; }
    struct mc_scan s = {.candidate = may_point, .grow = grow_stack};
    s.blocks = __libc_memalign(16, n * sizeof *s.blocks);
    s.marked = __libc_memalign(16, n);
    if (!s.blocks || !s.marked) { pthread_mutex_unlock(&heap_lock); return; }
    memset(s.marked, 0, n);
    size_t k = 0;
    for (struct mc_block *b = lists.live; b; b = b->next) s.blocks[k++] = b;
    s.n = n;
    mc_sort_blocks(s.blocks, n);
    /* roots: the other modules' writable data (is_runtime) and this thread's TLS, then this thread's stack, the
     * other running threads' TLS */
    tls.s = &s;
    dl_iterate_phdr(scan_module, &tls);
    if (base) mc_scan_range(&s, (uintptr_t)__builtin_frame_address(0), (uintptr_t)base + size);
    mc_threads_each(scan_thread_tls, &tls);
    mc_fake_frames_scan(scan_fake_frame, &s);
    mc_thread_starts_scan(scan_fake_frame, &s);
    /* and the program's own anonymous mappings (pymalloc's arenas, other threads' stacks) */
    collect_glibc_blocks();
    mc_scan_anon(&s, glibc_cut);
    mc_scan_reachable(&s);
    /* group the leaks by allocation site */
    const struct mc_block **sites = __libc_memalign(16, n * sizeof *sites);
    size_t *counts = __libc_memalign(16, n * sizeof *counts), *bytes = __libc_memalign(16, n * sizeof *bytes);
    size_t leaked, leaked_bytes;
    size_t nsites = mc_group_leaks(&s, from_loader, sites, counts, bytes, &leaked, &leaked_bytes);
    pthread_mutex_unlock(&heap_lock);
    if (leaked) mc_report_leaks(leaked, leaked_bytes, sites, counts, bytes, nsites);
}

/* malloc on behalf of a libc function (strdup): the block is named after the program's call */
void *mc_malloc_at(size_t n, const void *pc) { return allocate(n, 16, MC_MALLOC, 0, pc); }
