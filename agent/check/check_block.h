/*
 * check_block.h: the block logic both checkers share, as static inline functions: the compiled-in runtime's
 * allocator (check_heap.c, check_shadow.c: libmemtrace-check.so) and the fault-mode agent's `memtrace run
 * --check` (check_run.c: libmemtrace-agent.so). One layout, one quarantine, one leak scan, one shadow test,
 * so that both report the same blocks the same way (check_objects.c names them).
 *
 *   shadow     mc_shadow_first_bad (the first byte of a range that may not be touched), mc_shadow_in_range
 *   layout     mc_right_redzone, mc_header_at (the header a block start has, if any), family names
 *   lists      the live list and the FIFO quarantine (struct mc_lists): link, unlink, retire into quarantine
 *   leaks      struct mc_scan: heapsort by address, the reachability scan, grouping by allocation site
 *
 * Nothing here allocates or calls libc: the agent runs under its own allocator and boot rules (agent.h). What
 * differs between the two is passed in: `view` maps a header's program address to where it may be written (the
 * agent's alias view of its protected heap; the identity in the runtime), `candidate` says which words may
 * point into the heap, `grow` enlarges the scan's stack with each library's memory, `skip` leaves out the
 * blocks that are not the program's leaks (the dynamic loader's). Locking is the caller's.
 *
 * What it gets wrong: nothing of its own; the callers' notes (check_run.c, check_heap.c) say what the checks miss.
 */
#ifndef MEMTRACE_CHECK_BLOCK_H
#define MEMTRACE_CHECK_BLOCK_H

#include <fcntl.h>
#include <link.h>

#include "check.h"
#include "mt_common.h"

typedef struct mc_block *(*mc_view_fn)(const struct mc_block *b);

static inline struct mc_block *mc_view_self(const struct mc_block *b) { return (struct mc_block *)b; }

/* ---- shadow ---- */

/* Whether addr has a shadow byte at all (below the shadow, or above it in user space). */
static inline int mc_shadow_in_range(uintptr_t addr)
{
    return addr < MC_SHADOW_OFFSET || (addr >= MC_SHADOW_END && addr < 0x800000000000ULL);
}

/* The first byte of [addr, addr+size) that may not be touched, or 0 when all may. General registers only:
 * check_shadow.c's loop check calls it with only those saved. */
__attribute__((target("general-regs-only")))
static inline uintptr_t mc_shadow_first_bad(uintptr_t addr, size_t size)
{
    if (size == 0) return 0;
    uintptr_t end = addr + size;
    for (uintptr_t a = addr; a < end;) {
        uint8_t *s = MC_SHADOW(a);
        if ((a & 7) == 0 && end - a >= 64 && *(uint64_t *)s == 0) { a += 64; continue; }
        uint8_t v = *s;
        if (v != 0) {
            if (v >= 0x80) return a;
            uintptr_t granule = a & ~(uintptr_t)7, limit = granule + v, top = end < granule + 8 ? end : granule + 8;
            if (top > limit) return a > limit ? a : limit;
        }
        a = (a | 7) + 1;
    }
    return 0;
}

/* ---- layout ---- */

/* The right redzone of a block of size bytes: an eighth of it, 32 bytes to 2 KB, whole granules. */
static inline size_t mc_right_redzone(size_t size)
{
    size_t rz = size / 8;
    if (rz < 32) rz = 32;
    if (rz > 2048) rz = 2048;
    return (rz + 7) & ~(size_t)7;
}

static inline const char *mc_alloc_name(int f) { return f == MC_NEW ? "new" : f == MC_NEW_ARRAY ? "new[]" : "malloc"; }
static inline const char *mc_release_name(int f) { return f == MC_NEW ? "delete" : f == MC_NEW_ARRAY ? "delete[]" : "free"; }

/* The header of the block p starts, live or in quarantine (program address), or NULL; the caller has made
 * sure p's left redzone is memory it may read through view. */
static inline struct mc_block *mc_header_at(uintptr_t p, mc_view_fn view)
{
    if (*MC_SHADOW(p - 8) != MC_HEAP_LEFT) return NULL;
    struct mc_block *b = (struct mc_block *)(p - sizeof *b), *h = view(b);
    if (h->magic != MC_LIVE && h->magic != MC_QUARANTINED) return NULL;
    if ((uintptr_t)h->chunk >= p || p - (uintptr_t)h->chunk > (1u << 20)) return NULL;
    return b;
}

/* ---- the live list and the quarantine (the caller holds its lock) ---- */

struct mc_lists {
    struct mc_block *live;              /* doubly linked, program addresses */
    struct mc_block *q_head, *q_tail;   /* quarantine, oldest first */
    size_t q_bytes, q_limit;
    uint32_t counter;                   /* blocks numbered in allocation order */
};

/* A new block, its header filled but for number, magic and links: numbered and put first on the live list. */
static inline void mc_link_live(struct mc_lists *l, struct mc_block *b, mc_view_fn view)
{
    struct mc_block *h = view(b);
    h->number = ++l->counter;
    h->magic = MC_LIVE;
    h->prev = NULL;
    h->next = l->live;
    if (l->live) view(l->live)->prev = b;
    l->live = b;
}

static inline void mc_unlink_live(struct mc_lists *l, struct mc_block *b, mc_view_fn view)
{
    struct mc_block *h = view(b);
    if (h->prev) view(h->prev)->next = h->next; else l->live = h->next;
    if (h->next) view(h->next)->prev = h->prev;
}

/* The quarantine's oldest block taken out of it (magic cleared, next NULL), or NULL when it is empty. */
static inline struct mc_block *mc_quarantine_pop(struct mc_lists *l, mc_view_fn view)
{
    struct mc_block *o = l->q_head;
    if (!o) return NULL;
    struct mc_block *oh = view(o);
    l->q_head = oh->next;
    if (!l->q_head) l->q_tail = NULL;
    l->q_bytes -= oh->size;
    oh->magic = 0;
    oh->next = NULL;
    return o;
}

/* A block off the live list into the quarantine, its bytes poisoned as freed by pc. Returns the blocks the
 * quarantine lets go of (linked through next, magic cleared), for the caller to release outside its lock. */
static inline struct mc_block *mc_quarantine(struct mc_lists *l, struct mc_block *b, const void *pc, mc_view_fn view)
{
    struct mc_block *h = view(b);
    h->magic = MC_QUARANTINED;
    h->free_pc = pc;
    mc_poison((uintptr_t)(b + 1), (h->size + 7) & ~(size_t)7, MC_HEAP_FREED);
    h->next = NULL;
    if (l->q_tail) view(l->q_tail)->next = b; else l->q_head = b;
    l->q_tail = b;
    l->q_bytes += h->size;
    struct mc_block *out = NULL;
    while (l->q_bytes > l->q_limit && l->q_head) {
        struct mc_block *o = mc_quarantine_pop(l, view);
        view(o)->next = out;
        out = o;
    }
    return out;
}

/* ---- leaks: reachability from roots through pointers, interior ones included ---- */

struct mc_scan {
    struct mc_block **blocks;    /* live blocks sorted by address */
    uint8_t *marked;
    size_t n;
    size_t *stack, depth, cap;   /* marked blocks still to scan */
    int (*candidate)(uintptr_t v);          /* whether a word may point into the heap at all */
    int (*grow)(struct mc_scan *s);         /* a larger stack (cap updated), or 0 */
};

/* heapsort by address: qsort may call malloc, which waits for the lock the leak check holds */
static inline void mc_sift(struct mc_block **a, size_t i, size_t n)
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

static inline void mc_sort_blocks(struct mc_block **a, size_t n)
{
    for (size_t i = n / 2; i-- > 0;) mc_sift(a, i, n);
    for (size_t end = n; end-- > 1;) {
        struct mc_block *t = a[0]; a[0] = a[end]; a[end] = t;
        mc_sift(a, 0, end);
    }
}

/* Marks the blocks the words of [from, to) point into and stacks them for scanning. */
static inline void mc_scan_range(struct mc_scan *s, uintptr_t from, uintptr_t to)
{
    if (s->n == 0) return;
    /* words outside [first block's start, last block's end] (doubles, small integers) skip the search: matmul's
     * 1.5 MB of matrices in .bss were 2.5 % of its checked run */
    const struct mc_block *top = s->blocks[s->n - 1];
    uintptr_t low = (uintptr_t)(s->blocks[0] + 1), high = (uintptr_t)(top + 1) + (top->size ? top->size : 1);
    from = (from + 7) & ~(uintptr_t)7;
    for (uintptr_t a = from; a + 8 <= to; a += 8) {
        uintptr_t v = *(volatile uintptr_t *)a;
        if (v - low >= high - low || !s->candidate(v)) continue;
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
        if (s->depth == s->cap && !s->grow(s)) continue;
        s->stack[s->depth++] = i;
    }
}

/* A module's roots (dl_iterate_phdr's callback does the rest): its writable segments, and with tls the calling
 * thread's block of its thread-local variables (__thread void *p = malloc(..)). */
static inline void mc_scan_module(struct mc_scan *s, const struct dl_phdr_info *info, size_t size, int tls)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W)) {
            uintptr_t a = info->dlpi_addr + ph->p_vaddr;
            mc_scan_range(s, a, a + ph->p_memsz);
        }
        if (tls && ph->p_type == PT_TLS && size >= offsetof(struct dl_phdr_info, dlpi_tls_data) + sizeof(void *) &&
            info->dlpi_tls_data) {
            uintptr_t a = (uintptr_t)info->dlpi_tls_data;
            mc_scan_range(s, a, a + ph->p_memsz);
        }
    }
}

/* The first range memtrace mapped (mt_own) or the caller excludes (cut) that overlaps [at, e): its start
 * (at least at; e when none) and, in *end, its end. */
static inline uintptr_t mc_next_cut(uintptr_t at, uintptr_t e, uintptr_t (*cut)(uintptr_t at, uintptr_t e, uintptr_t *end),
                                    uintptr_t *end)
{
    const struct mt_own *o = &__memtrace_own;
    uintptr_t best = e;
    *end = e;
    for (int i = 0; i < o->n; i++) {
        uintptr_t cs = o->start[i] > at ? o->start[i] : at;
        if (o->start[i] < e && at < o->end[i] && cs < best) { best = cs; *end = o->end[i]; }
    }
    uintptr_t cend, c = cut ? cut(at, best, &cend) : best;
    if (c < best) { best = c; *end = cend; }
    return best;
}

/* [a, e) but what mc_next_cut leaves out, word by word, only pages resident (mincore: a page never touched
 * is all zeros; the cost is the memory the program wrote, not what it reserved). */
static inline void mc_scan_resident(struct mc_scan *s, uintptr_t a, uintptr_t e,
                                    uintptr_t (*cut)(uintptr_t at, uintptr_t e, uintptr_t *end))
{
    unsigned char resident[256];
    while (a < e) {
        uintptr_t cut_end, c = mc_next_cut(a, e, cut, &cut_end);
        for (uintptr_t at = a; at < c;) {
            uintptr_t to = c - at > sizeof resident * 4096 ? at + sizeof resident * 4096 : c;
            if (mt_sys3(SYS_mincore, at, (to - at + 4095) & ~(uintptr_t)4095, resident) != 0) mc_scan_range(s, at, to);
            else
                for (size_t i = 0; at + i * 4096 < to; i++)
                    if (resident[i] & 1) mc_scan_range(s, at + i * 4096, at + (i + 1) * 4096 < to ? at + (i + 1) * 4096 : to);
            at = to;
        }
        if (c >= e) return;
        a = cut_end > c ? cut_end : c + 4096;
    }
}

struct mc_anon {
    struct mc_scan *s;
    uintptr_t (*cut)(uintptr_t at, uintptr_t e, uintptr_t *end);
};

/* One maps line for mc_scan_anon: scanned when private, readable, writable and without a path. */
static inline void mc_scan_anon_line(const struct mt_map_line *m, void *arg)
{
    const struct mc_anon *a = arg;
    if ((m->prot & (PROT_READ | PROT_WRITE)) == (PROT_READ | PROT_WRITE) && m->is_private && m->path_len == 0)
        mc_scan_resident(a->s, m->start, m->end, a->cut);
}

/* The program's own anonymous memory as roots, as memcheck takes every mapping the program made: memory it
 * maps itself (pymalloc's arenas hold the only pointers to some of python3's malloc'd blocks) and the stacks
 * and thread-local blocks of threads other than the exiting one. /proc/self/maps is read by mt_maps_each
 * (raw system calls, memtrace's own pages); each private, readable and writable mapping without a path is
 * scanned once, word by word, but the ranges memtrace mapped itself (mt_own: the shadow, the check runtime's
 * arena and fake stacks, trace buffers, the agent's pages) and those `cut` gives (the caller's blocks outside
 * its own mappings, live or in quarantine: a freed block is never a root, a live one is scanned by
 * reachability), page by page as resident. The kernel merges neighbouring anonymous mappings into one line,
 * hence cuts, not skips. Named mappings ([stack], [heap], files) are not anonymous: the modules' segments and
 * the exiting thread's stack are the caller's to scan. */
static inline void mc_scan_anon(struct mc_scan *s, uintptr_t (*cut)(uintptr_t at, uintptr_t e, uintptr_t *end))
{
    if (__memtrace_own.full || s->n == 0) return;
    struct mc_anon a = {s, cut};
    mt_maps_each(mc_scan_anon_line, &a);
}

/* After the roots: the blocks reachable from marked ones, until none is left to scan. */
static inline void mc_scan_reachable(struct mc_scan *s)
{
    while (s->depth) {
        size_t i = s->stack[--s->depth];
        uintptr_t start = (uintptr_t)(s->blocks[i] + 1);
        mc_scan_range(s, start, start + s->blocks[i]->size);
    }
}

/* The unmarked blocks (but those skip leaves out) grouped by allocating call into sites/counts/bytes (room for
 * s->n each); the first block of a site names it. Returns the number of sites; *leaked, *leaked_bytes the totals. */
static inline size_t mc_group_leaks(const struct mc_scan *s, int (*skip)(const void *pc), const struct mc_block **sites,
                                    size_t *counts, size_t *bytes, size_t *leaked, size_t *leaked_bytes)
{
    size_t nsites = 0;
    *leaked = *leaked_bytes = 0;
    for (size_t i = 0; sites && counts && bytes && i < s->n; i++) {
        if (s->marked[i]) continue;
        const struct mc_block *b = s->blocks[i];
        if (skip(b->alloc_pc)) continue;
        ++*leaked;
        *leaked_bytes += b->size;
        size_t j = 0;
        while (j < nsites && sites[j]->alloc_pc != b->alloc_pc) j++;
        if (j == nsites) { sites[nsites] = b; counts[nsites] = 0; bytes[nsites] = 0; nsites++; }
        if (b->number < sites[j]->number) sites[j] = b;    /* the first block of the site names it */
        counts[j]++;
        bytes[j] += b->size;
    }
    return nsites;
}

#endif
