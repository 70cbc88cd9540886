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
 * and it waits in a FIFO quarantine (MEMTRACE_CHECK_QUARANTINE bytes, default 64 MB) before glibc gets it back,
 * so that a use after free is caught even after more allocations.
 *
 * Leaks at exit (LeakSanitizer's definition): every live block not reachable from a root through pointers
 * (interior pointers count) is a leak, except the dynamic loader's own (threads' TLS vectors). Roots: the
 * writable segments of every loaded module, the calling thread's thread-local variables of every module, and
 * its stack from its stack pointer up, registers included by being spilled into that stack.
 *
 * What it gets wrong: stacks and registers of other threads still running at exit are not roots (their
 * blocks may be reported); thread-local storage of other threads is not scanned; a block whose header a
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
#include <unistd.h>

#include "check.h"

extern void *__libc_memalign(size_t align, size_t size);
extern void __libc_free(void *p);

#define LEFT 64
#define LARGE (128u << 10)

static pthread_mutex_t heap_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mc_block *live;                    /* doubly linked */
static struct mc_block *q_head, *q_tail;          /* quarantine, oldest first */
static size_t q_bytes, q_limit = 64u << 20;
static uint32_t counter;

void mc_set_quarantine(size_t bytes) { q_limit = bytes; }

static size_t right_redzone(size_t size)
{
    size_t rz = size / 8;
    if (rz < 32) rz = 32;
    if (rz > 2048) rz = 2048;
    return (rz + 7) & ~(size_t)7;
}

static void *allocate(size_t size, size_t align, uint8_t family, uint8_t fn, const void *pc)
{
    mc_init();
    if (align < 16) align = 16;
    size_t left = align > LEFT ? align : LEFT;
    /* a large block (glibc mmaps it) gets 16 KB redzones: a read 4,000 bytes before a 1 MB block is caught */
    if (size >= LARGE && left < 16384) left = 16384;
    size_t body = (size + 7) & ~(size_t)7;
    size_t total = left + body + (size >= LARGE ? 16384 : right_redzone(size));
    if (size > ((size_t)1 << 46) || total < size) {
        errno = ENOMEM;
        return NULL;
    }
    char *chunk = __libc_memalign(align, total);
    if (!chunk) return NULL;
    uintptr_t user = (uintptr_t)chunk + left;
    struct mc_block *b = (struct mc_block *)(user - sizeof *b);
    b->size = size;
    b->chunk = chunk;
    b->alloc_pc = pc;
    b->free_pc = NULL;
    b->family = family;
    b->fn = fn;
    b->tid = (uint32_t)gettid();
    mc_poison((uintptr_t)chunk, left, MC_HEAP_LEFT);
    mc_unpoison(user, size);
    mc_poison(user + body, total - left - body, MC_HEAP_RIGHT);
    pthread_mutex_lock(&heap_lock);
    b->number = ++counter;
    b->magic = MC_LIVE;
    b->prev = NULL;
    b->next = live;
    if (live) live->prev = b;
    live = b;
    pthread_mutex_unlock(&heap_lock);
    return (void *)user;
}

/* The header of a block the pointer starts, live or in quarantine; NULL when p starts none. */
static struct mc_block *header_at(uintptr_t p)
{
    if ((p & 15) || !mc_addressable_range(p) || p < LEFT) return NULL;
    if (*MC_SHADOW(p - 8) != MC_HEAP_LEFT) return NULL;
    struct mc_block *b = (struct mc_block *)(p - sizeof *b);
    if (b->magic != MC_LIVE && b->magic != MC_QUARANTINED) return NULL;
    if ((uintptr_t)b->chunk >= p || p - (uintptr_t)b->chunk > (1u << 20)) return NULL;
    return b;
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

static void unlink_live(struct mc_block *b)
{
    if (b->prev) b->prev->next = b->next; else live = b->next;
    if (b->next) b->next->prev = b->prev;
}

static const char *family_name(int f) { return f == MC_NEW ? "new" : f == MC_NEW_ARRAY ? "new[]" : "malloc"; }
static const char *release_name(int f) { return f == MC_NEW ? "delete" : f == MC_NEW_ARRAY ? "delete[]" : "free"; }

static void release(void *p, uint8_t family, const void *pc)
{
    if (!p) return;
    mc_init();
    uintptr_t u = (uintptr_t)p;
    pthread_mutex_lock(&heap_lock);
    struct mc_block *b = header_at(u);
    if (!b || b->magic != MC_LIVE) {
        pthread_mutex_unlock(&heap_lock);
        if (b) {
            mc_report_free("double free", u, b, pc, release_name(family));
        } else {
            mc_report_free("invalid free", u, NULL, pc, release_name(family));
        }
        return;
    }
    if (b->family != family) {
        pthread_mutex_unlock(&heap_lock);
        mc_report_free("allocator mismatch", u, b, pc, release_name(family));
        pthread_mutex_lock(&heap_lock);
        if (b->magic != MC_LIVE) { pthread_mutex_unlock(&heap_lock); return; }
    }
    unlink_live(b);
    b->magic = MC_QUARANTINED;
    b->free_pc = pc;
    mc_poison(u, (b->size + 7) & ~(size_t)7, MC_HEAP_FREED);
    b->next = NULL;
    if (q_tail) q_tail->next = b; else q_head = b;
    q_tail = b;
    q_bytes += b->size;
    struct mc_block *out = NULL;
    while (q_bytes > q_limit && q_head) {
        struct mc_block *o = q_head;
        q_head = o->next;
        if (!q_head) q_tail = NULL;
        q_bytes -= o->size;
        o->magic = 0;
        o->next = out;
        out = o;
    }
    pthread_mutex_unlock(&heap_lock);
    while (out) {
        struct mc_block *o = out;
        out = o->next;
        __libc_free(o->chunk);
    }
}

const char *mc_family_name(int f) { return family_name(f); }

#define CALLER __builtin_return_address(0)

MC_EXPORT void *malloc(size_t n) { return allocate(n, 16, MC_MALLOC, 0, CALLER); }
MC_EXPORT void free(void *p) { release(p, MC_MALLOC, CALLER); }
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
    void *p = allocate(n, 16, MC_MALLOC, 2, pc);
    if (!p) return NULL;
    memcpy(p, old, b->size < n ? b->size : n);
    release(old, b->family, pc);
    return p;
}

MC_EXPORT void *realloc(void *old, size_t n) { return reallocate(old, n, CALLER); }

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

struct scan {
    struct mc_block **blocks;    /* live blocks sorted by address */
    uint8_t *marked;
    size_t n;
    size_t *stack, depth, cap;
};

/* heapsort by address: qsort may call malloc, which waits for the lock the leak check holds */
static void sift(struct mc_block **a, size_t i, size_t n)
{
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) return;
        if (c + 1 < n && a[c + 1] > a[c]) c++;
        if (a[i] >= a[c]) return;
        struct mc_block *t = a[i]; a[i] = a[c]; a[c] = t;
        i = c;
    }
}

static void sort_blocks(struct mc_block **a, size_t n)
{
    for (size_t i = n / 2; i-- > 0;) sift(a, i, n);
    for (size_t end = n; end-- > 1;) {
        struct mc_block *t = a[0]; a[0] = a[end]; a[end] = t;
        sift(a, 0, end);
    }
}

static void scan_range(struct scan *s, uintptr_t from, uintptr_t to)
{
    from = (from + 7) & ~(uintptr_t)7;
    for (uintptr_t a = from; a + 8 <= to; a += 8) {
        uintptr_t v = *(uintptr_t *)a;
        if (v < 4096) continue;
        size_t lo = 0, hi = s->n;
        while (lo < hi) {       /* the last block starting at or below v */
            size_t mid = (lo + hi) / 2;
            if ((uintptr_t)(s->blocks[mid] + 1) <= v) lo = mid + 1; else hi = mid;
        }
        if (lo == 0) continue;
        size_t i = lo - 1;
        uintptr_t start = (uintptr_t)(s->blocks[i] + 1);
        if (v >= start + (s->blocks[i]->size ? s->blocks[i]->size : 1) || s->marked[i]) continue;
        s->marked[i] = 1;
        if (s->depth == s->cap) {
            size_t cap = s->cap ? 2 * s->cap : 1024;
            size_t *grown = __libc_memalign(16, cap * sizeof *grown);
            if (!grown) continue;
            if (s->stack) { memcpy(grown, s->stack, s->depth * sizeof *grown); __libc_free(s->stack); }
            s->stack = grown;
            s->cap = cap;
        }
        s->stack[s->depth++] = i;
    }
}

static int scan_module(struct dl_phdr_info *info, size_t size, void *data)
{
    struct scan *s = data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W)) {
            uintptr_t a = info->dlpi_addr + ph->p_vaddr;
            scan_range(s, a, a + ph->p_memsz);
        }
        /* the calling thread's block of the module's thread-local variables (__thread void *p = malloc(..)) */
        if (ph->p_type == PT_TLS && size >= offsetof(struct dl_phdr_info, dlpi_tls_data) + sizeof(void *) && info->dlpi_tls_data) {
            uintptr_t a = (uintptr_t)info->dlpi_tls_data;
            scan_range(s, a, a + ph->p_memsz);
        }
    }
    return 0;
}

/* The dynamic loader's own allocations (threads' TLS vectors, which only thread descriptors in glibc's stack
 * cache point to) are not the program's leaks; LeakSanitizer leaves them out too. */
static int from_loader(const void *pc)
{
    Dl_info info;
    return dladdr(pc, &info) && info.dli_fname && strstr(info.dli_fname, "/ld-linux");
}

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
    pthread_mutex_lock(&heap_lock);
    size_t n = 0;
    for (struct mc_block *b = live; b; b = b->next) n++;
    if (n == 0) { pthread_mutex_unlock(&heap_lock); return; }
    struct scan s = {0};
    s.blocks = __libc_memalign(16, n * sizeof *s.blocks);
    s.marked = __libc_memalign(16, n);
    if (!s.blocks || !s.marked) { pthread_mutex_unlock(&heap_lock); return; }
    memset(s.marked, 0, n);
    size_t k = 0;
    for (struct mc_block *b = live; b; b = b->next) s.blocks[k++] = b;
    s.n = n;
    sort_blocks(s.blocks, n);
    /* roots: modules' writable data (the live list and the quarantine are in this library's .bss, but they
     * point at headers, below the blocks' starts, so they mark nothing), then this thread's stack */
    dl_iterate_phdr(scan_module, &s);
    if (base) scan_range(&s, (uintptr_t)__builtin_frame_address(0), (uintptr_t)base + size);
    while (s.depth) {
        size_t i = s.stack[--s.depth];
        uintptr_t start = (uintptr_t)(s.blocks[i] + 1);
        scan_range(&s, start, start + s.blocks[i]->size);
    }
    /* group the leaks by allocation site */
    const struct mc_block **sites = __libc_memalign(16, n * sizeof *sites);
    size_t *counts = __libc_memalign(16, n * sizeof *counts), *bytes = __libc_memalign(16, n * sizeof *bytes);
    size_t nsites = 0, leaked = 0, leaked_bytes = 0;
    for (size_t i = 0; sites && counts && bytes && i < n; i++) {
        if (s.marked[i]) continue;
        const struct mc_block *b = s.blocks[i];
        if (from_loader(b->alloc_pc)) continue;
        leaked++;
        leaked_bytes += b->size;
        size_t j = 0;
        while (j < nsites && sites[j]->alloc_pc != b->alloc_pc) j++;
        if (j == nsites) { sites[nsites] = b; counts[nsites] = 0; bytes[nsites] = 0; nsites++; }
        if (b->number < sites[j]->number) sites[j] = b;    /* the first block of the site names it */
        counts[j]++;
        bytes[j] += b->size;
    }
    pthread_mutex_unlock(&heap_lock);
    if (leaked) mc_report_leaks(leaked, leaked_bytes, sites, counts, bytes, nsites);
}

/* malloc on behalf of a libc function (strdup): the block is named after the program's call */
void *mc_malloc_at(size_t n, const void *pc) { return allocate(n, 16, MC_MALLOC, 0, pc); }
