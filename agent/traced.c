/*
 * memtrace agent, the traced set: sorted, disjoint page ranges (data/bss/rodata of the loaded objects, the
 * heap, memory the program maps or allocates) with the rights the program gave them. While recording,
 * traced pages have no rights at all, so every access faults (fault.c). Opening a span gives its pages the
 * program's rights back for a while (one instruction's step, one system call, one wrapper); openings are
 * counted, so that overlapping openings by several threads nest and the last one closes. A call the agent
 * cannot describe opens everything (open_all_locked). Changes of the set are MT_RANGE records.
 *
 * Also here: memtrace_start/memtrace_stop (and MadT's names for them), and the two ways of reading the
 * program's memory that may be protected: copy_in (opens it) and user_transfer (through the kernel).
 *
 * Traced heap, anonymous and module data memory is moved onto memfds when it joins the set: the program's
 * view stays at its addresses, an always-open alias view lets the agent reach it without opening it
 * (alias_*: the redirected steps of fault.c, block operations, system-call buffers, fork's private copies).
 *
 * What it gets wrong: protection is per process, so while one thread has a page open another thread's
 * access to it is not seen (counted as windows_at_risk); the table of openings is searched linearly. A
 * thread arena is recognised by glibc's heap_info layout (64 MiB heaps); each mmap'd chunk and anonymous
 * mapping is its own memfd and two mappings, so a program with very many of them reaches vm.max_map_count
 * sooner. While memory is moved it is read-only for a moment: another thread's system call writing into
 * it then fails with EFAULT (its own stores wait and retry). A memfd's pages of
 * memory the program unmaps are freed with the alias view; moved memory's rights are remembered as they
 * were at the move (a fork's child gets those, not later mprotect changes of untraced moved pages). A module's
 * writable data is moved with the rest of its segment (the bss) as read-write, even a part the program
 * protected otherwise before the move.
 */
#include "agent.h"

/* ------------------------------------------------------------------------------------------------ */
/* Span tables: sorted, disjoint [start, end) entries of any struct that begins with those two words  */
/* (struct range, struct alias), in agent-mapped arrays that double when full.                        */

static uintptr_t span_end(const void *base, size_t size, int i)
{
    return ((const uintptr_t *)((const char *)base + size * (size_t)i))[1];
}

static int span_index(const void *base, int n, size_t size, uintptr_t a) /* first entry with end > a */
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (span_end(base, size, mid) <= a) lo = mid + 1; else hi = mid;
    }
    return lo;
}

/* Room for `extra` more entries: the table as it is, or a larger copy (the old one unmapped); NULL when */
/* no memory could be mapped.                                                                          */
static void *span_reserve(void *base, int n, int *cap, int first_cap, size_t size, int extra)
{
    if (n + extra <= *cap) return base;
    int c = *cap ? *cap * 2 : first_cap;
    while (c < n + extra) c *= 2;
    void *m = agent_map(size * (size_t)c);
    if (!m) return NULL;
    if (base) {
        mt_memcpy(m, base, size * (size_t)n);
        mt_unmap_pages((void *)base, size * (size_t)*cap);
    }
    *cap = c;
    return m;
}

/* Cuts [s, e) out of entry i, which overlaps it: trims it, splits it in two or drops it. A split asks */
/* grow_one for room for one more entry (it returns the table, perhaps moved, or NULL). Returns the    */
/* next entry that may overlap [s, e), or -1 when none can (or the split found no memory).             */
static int span_cut(void *base, int *n, size_t size, void *(*grow_one)(void), int i, uintptr_t s, uintptr_t e)
{
    char *at = (char *)base + size * (size_t)i;
    uintptr_t *w = (uintptr_t *)at;
    if (w[0] < s && w[1] > e) { /* split in two */
        if (!(base = grow_one())) return -1;
        at = (char *)base + size * (size_t)i;
        mt_memmove(at + 2 * size, at + size, size * (size_t)(*n - i - 1));
        mt_memcpy(at + size, at, size);
        ((uintptr_t *)at)[1] = s;
        ((uintptr_t *)(at + size))[0] = e;
        (*n)++;
        return -1;
    }
    if (w[0] < s) {
        w[1] = s;
        return i + 1;
    }
    if (w[1] > e) {
        w[0] = e;
        return -1;
    }
    mt_memmove(at, at + size, size * (size_t)(*n - i - 1));
    (*n)--;
    return i;
}

/* MT_DEBUG: what this file promises of a span table, asserted after each change: every entry a whole  */
/* number of pages, sorted and disjoint, and no more entries than the table holds. Lock held.          */
static void span_check(const void *base, int n, int cap, size_t size, const char *what)
{
#ifdef MT_DEBUG
    MT_ASSERT(n >= 0 && n <= cap, what);
    uintptr_t mask = (uintptr_t)g.page - 1, last = 0;
    for (int i = 0; i < n; i++) {
        const uintptr_t *w = (const uintptr_t *)((const char *)base + size * (size_t)i);
        MT_ASSERT(w[0] < w[1] && !(w[0] & mask) && !(w[1] & mask), what);
        MT_ASSERT(i == 0 || last <= w[0], what);
        last = w[1];
    }
#else
    (void)base; (void)n; (void)cap; (void)size; (void)what;
#endif
}
#define SET_CHECK() span_check(g.set, g.nset, g.capset, sizeof *g.set, "the traced set is sorted and disjoint, in pages")
#define ALIAS_CHECK() span_check(g.alias, g.nalias, g.capalias, sizeof *g.alias, "the alias table is sorted and disjoint, in pages")
#define LOCK_HELD() MT_ASSERT(__atomic_load_n(&g.lock.v, __ATOMIC_RELAXED), "g.lock is held by a *_locked function's caller")

/* ------------------------------------------------------------------------------------------------ */
/* The traced set: sorted, disjoint page ranges with the rights the program gave them.               */

int set_index(uintptr_t a) /* first range with end > a */
{
    return span_index(g.set, g.nset, sizeof *g.set, a);
}

struct range *set_find(uintptr_t a)
{
    int i = set_index(a);
    return i < g.nset && g.set[i].start <= a ? &g.set[i] : NULL;
}

static int set_reserve(int extra)
{
    struct range *t = span_reserve(g.set, g.nset, &g.capset, 1024, sizeof *g.set, extra);
    if (t) g.set = t;
    return t != NULL;
}

static void *set_grow_one(void) { return set_reserve(1) ? g.set : NULL; }

static int covered_by_opening(uintptr_t page)
{
    for (int i = 0; i < g.nopen; i++)
        if (g.open[i].start <= page && page < g.open[i].end) return 1;
    return 0;
}

/* Takes the rights away from [s, e) except from pages someone has open right now. */
static void protect_span(uintptr_t s, uintptr_t e)
{
    if (g.all_open) return; /* the last one to close everything protects it all again */
    if (!g.nopen) { mt_sys3(SYS_mprotect, s, e - s, PROT_NONE); return; }
    uintptr_t run = s;
    for (uintptr_t p = s; p < e; p += g.page) {
        if (covered_by_opening(p)) {
            if (run < p) mt_sys3(SYS_mprotect, run, p - run, PROT_NONE);
            run = p + g.page;
        }
    }
    if (run < e) mt_sys3(SYS_mprotect, run, e - run, PROT_NONE);
}

static void emit_range(int add, uintptr_t s, uintptr_t e, int kind, int prot)
{
    REC(MT_RANGE, struct mt_range, r);
    r.h.flags = add ? MT_RANGE_ADD : MT_RANGE_REMOVE;
    r.start = s;
    r.end = e;
    r.kind = (uint32_t)kind;
    r.prot = (uint32_t)prot;
    emit(&r);
}

/* ------------------------------------------------------------------------------------------------ */
/* Aliases: traced memory moved onto shared-memory objects, so that the agent can reach it through a  */
/* second, always-open view while the program's view stays protected (see fault.c, "Redirected").     */

static int alias_index(uintptr_t a) /* first alias with end > a */
{
    return span_index(g.alias, g.nalias, sizeof *g.alias, a);
}

/* The delta of the alias view when all of [s, e) lies in one moved piece, else 0. Lock held. */
intptr_t alias_delta(uintptr_t s, uintptr_t e)
{
    int i = alias_index(s);
    if (i == g.nalias || g.alias[i].start > s) return 0;
    intptr_t d = g.alias[i].delta;
    /* pieces moved together keep consecutive offsets of one object only within one entry */
    return e <= g.alias[i].end ? d : 0;
}

static void copy_words(uintptr_t d, uintptr_t s, size_t n);

static int alias_reserve(int extra)
{
    struct alias *t = span_reserve(g.alias, g.nalias, &g.capalias, 256, sizeof *g.alias, extra);
    if (t) g.alias = t;
    return t != NULL;
}

static void *alias_grow_one(void) { return alias_reserve(1) ? g.alias : NULL; }

/* Copies the pages of anonymous memory that hold anything (present or swapped, per /proc/self/pagemap): */
/* the others read as zeroes, as a new memfd does, and copying them would make them take memory.         */
static void copy_present(uintptr_t d, uintptr_t s, size_t n)
{
    long fd = mt_sys3(SYS_open, (long)"/proc/self/pagemap", O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) { copy_words(d, s, n); return; }
    uint64_t entries[512];
    for (size_t done = 0; done < n;) {
        size_t pages = (n - done) / (size_t)g.page;
        if (pages > 512) pages = 512;
        long off = (long)((s + done) / (size_t)g.page * 8);
        long got = mt_sys4(SYS_pread64, fd, (long)entries, (long)(pages * 8), off);
        if (got != (long)(pages * 8)) { copy_words(d + done, s + done, n - done); break; }
        for (size_t i = 0; i < pages; i++, done += (size_t)g.page)
            if (entries[i] >> 62) copy_words(d + done, s + done, (size_t)g.page); /* bit 63 present, 62 swapped */
    }
    mt_sys1(SYS_close, fd);
}

static void copy_words(uintptr_t d, uintptr_t s, size_t n) /* page multiples */
{
    volatile uint64_t *dd = (volatile uint64_t *)d;
    const volatile uint64_t *ss = (const volatile uint64_t *)s;
    for (size_t i = 0; i < n / 8; i++) dd[i] = ss[i];
}

/* Moves [s, e) (untraced or open, readable or made so) onto a new memfd mapped at its own addresses    */
/* with `prot`, and an alias view of it. Other threads' stores to it fault meanwhile (read-only for the */
/* copy) and wait for g.lock; they retry afterwards (segv_access). 0 when it could not be done, and     */
/* then the memory is as it was. Lock held.                                                           */
static intptr_t move_to_memfd(uintptr_t s, uintptr_t e, int prot, int kind, uintptr_t rw_end, uintptr_t file_end)
{
    size_t n = e - s;
    long fd = mt_sys2(SYS_memfd_create, (long)"memtrace", MFD_CLOEXEC);
    if (fd < 0) return 0;
    intptr_t delta = 0;
    long al = -1;
    if (mt_sys2(SYS_ftruncate, fd, (long)n) == 0)
        al = mt_sys6(SYS_mmap, 0, (long)n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (!mt_failed(al) && al != -1) {
        mt_sys3(SYS_mprotect, s, n, PROT_READ);
        /* a module's data may still be the file's pages: those are copied whole (its bss, moved along, */
        /* is anonymous memory like any other)                                                          */
        if (kind == MT_REGION_DATA) copy_words((uintptr_t)al, s, file_end - s);
        copy_present((uintptr_t)al + (kind == MT_REGION_DATA ? file_end - s : 0), kind == MT_REGION_DATA ? file_end : s,
                     kind == MT_REGION_DATA ? e - file_end : n);
        long v = mt_sys6(SYS_mmap, (long)s, (long)n, prot, MAP_SHARED | MAP_FIXED, fd, 0);
        if ((uintptr_t)v == s) {
            if (rw_end < e) mt_sys3(SYS_mprotect, rw_end, e - rw_end, PROT_NONE);
            delta = (intptr_t)((uintptr_t)al - s);
        } else {
            mt_sys3(SYS_mprotect, s, n, prot);
            mt_sys2(SYS_munmap, al, (long)n);
        }
    }
    mt_sys1(SYS_close, fd);
    return delta;
}

static void alias_insert(uintptr_t s, uintptr_t e, intptr_t delta, int prot)
{
    if (!alias_reserve(1)) return;
    int i = alias_index(s);
    mt_memmove(&g.alias[i + 1], &g.alias[i], sizeof(struct alias) * (size_t)(g.nalias - i));
    g.alias[i] = (struct alias){s, e, delta, prot};
    g.nalias++;
    MT_ASSERT(delta != 0, "an alias view is elsewhere than the memory it aliases");
    ALIAS_CHECK();
}

/* Memory already on a memfd with an alias view at s + delta (heap.c's): the alias table takes it as it  */
/* is, one entry with the piece right below it when that has the same delta. Lock held.                */
void alias_adopt_locked(uintptr_t s, uintptr_t e, intptr_t delta, int prot)
{
    int i = alias_index(s);
    LOCK_HELD();
    if (i > 0 && g.alias[i - 1].end == s && g.alias[i - 1].delta == delta && g.alias[i - 1].prot == prot) {
        g.alias[i - 1].end = e;
        ALIAS_CHECK();
        return;
    }
    alias_insert(s, e, delta, prot);
}

/* The heap grows in small steps, and every block the allocator hands out would be one more memfd and    */
/* two more mappings (vm.max_map_count is 65,530): a piece of heap is moved together with the rest of its */
/* heap above it, up to the next traced or moved memory: in the brk heap up to the break; in a thread    */
/* arena of glibc's (a 64 MiB-aligned heap whose heap_info says how much of it is read-write) up to that */
/* end, and the inaccessible reserve above it too (*rw_end: where the reserve starts; it stays PROT_NONE,  */
/* and the arena's own mprotect makes it read-write as it grows, on the memfd). Anything else (an mmap'd */
/* chunk, an arena that does not look like one) is moved as it is.                                      */
#define ARENA_HEAP_MAX (64UL << 20) /* glibc's HEAP_MAX_SIZE on 64-bit */
static uintptr_t heap_extent(uintptr_t s, uintptr_t e, uintptr_t *rw_end)
{
    uintptr_t brk = (uintptr_t)mt_sys1(SYS_brk, 0), stop;
    if (e <= brk) {
        stop = page_up(brk);
    } else if (s >= page_up(brk)) { /* mmap'd memory, where thread arenas live */
        uintptr_t h = s & ~(ARENA_HEAP_MAX - 1);
        uint64_t info[4]; /* ar_ptr, prev, size, mprotect_size */
        if (user_transfer(info, h + (uintptr_t)alias_delta(h, h + sizeof info), sizeof info, 0)) return e;
        if (!info[0] || info[3] % (uint64_t)g.page || info[3] > ARENA_HEAP_MAX || info[2] > info[3] || h + info[3] <= e)
            return e;
        stop = h + ARENA_HEAP_MAX;
        *rw_end = h + info[3];
    } else {
        return e;
    }
    int i = set_index(e);
    int k = alias_index(e);
    if (i < g.nset && g.set[i].start < stop) stop = g.set[i].start > e ? g.set[i].start : e;
    if (k < g.nalias && g.alias[k].start < stop) stop = g.alias[k].start > e ? g.alias[k].start : e;
    if (*rw_end > stop) *rw_end = stop;
    return stop;
}

/* A module's writable data is moved together with the rest of its segment above it (the bss, the next   */
/* line of the memory map), up to the next traced or moved memory: a buffer across the boundary of the  */
/* two then lies in one moved piece, and a system call or block operation reaches it without opening.   */
static uintptr_t data_extent(uintptr_t e)
{
    uintptr_t stop = data_span_end(e - 1);
    if (stop <= e) return e;
    int i = set_index(e), k = alias_index(e);
    if (i < g.nset && g.set[i].start < stop) stop = g.set[i].start > e ? g.set[i].start : e;
    if (k < g.nalias && g.alias[k].start < stop) stop = g.alias[k].start > e ? g.alias[k].start : e;
    return stop;
}

/* Moves the parts of [s, e) not moved yet onto memfds. Lock held. */
static void alias_add_locked(uintptr_t s, uintptr_t e, int prot, int kind)
{
    uintptr_t at = s;
    while (at < e) {
        int i = alias_index(at);
        if (i < g.nalias && g.alias[i].start <= at) { at = g.alias[i].end; continue; }
        uintptr_t stop = i < g.nalias && g.alias[i].start < e ? g.alias[i].start : e;
        uintptr_t rw_end = UINTPTR_MAX, file_end = stop;
        if (stop == e && kind == MT_REGION_HEAP) stop = heap_extent(at, e, &rw_end);
        if (stop == e && kind == MT_REGION_DATA && prot == (PROT_READ | PROT_WRITE)) stop = data_extent(e);
        intptr_t d = move_to_memfd(at, stop, prot, kind, rw_end, file_end);
        if (d) alias_insert(at, stop, d, prot);
        at = stop;
    }
}

/* [s, e) is no longer mapped (munmap, MAP_FIXED over it, brk shrinking): its alias views go too. */
void alias_forget_locked(uintptr_t s, uintptr_t e)
{
    int i = alias_index(s);
    while (i >= 0 && i < g.nalias && g.alias[i].start < e) {
        struct alias a = g.alias[i];
        uintptr_t cs = a.start > s ? a.start : s, ce = a.end < e ? a.end : e;
        mt_sys2(SYS_munmap, (long)(cs + a.delta), (long)(ce - cs));
        i = span_cut(g.alias, &g.nalias, sizeof *g.alias, alias_grow_one, i, s, e);
    }
    ALIAS_CHECK();
}

/* MADV_DONTNEED on moved memory: private memory reads as zeroes afterwards, a memfd would keep its pages; */
/* the alias view gives them back to the memfd (MADV_REMOVE), so both views read zeroes. Lock held.       */
void alias_discard_locked(uintptr_t s, uintptr_t e)
{
    for (int i = alias_index(s); i < g.nalias && g.alias[i].start < e; i++) {
        uintptr_t cs = g.alias[i].start > s ? g.alias[i].start : s, ce = g.alias[i].end < e ? g.alias[i].end : e;
        mt_sys3(SYS_madvise, (long)(cs + g.alias[i].delta), (long)(ce - cs), MADV_REMOVE);
    }
}

/* How the agent reaches [s, e) without opening anything: 1 with *delta 0 when none of it is traced, 1   */
/* with the alias's delta when it all lies in one moved piece, else 0. Lock held.                       */
int reach_without_opening(uintptr_t s, uintptr_t e, intptr_t *delta)
{
    *delta = alias_delta(page_down(s), page_up(e));
    if (*delta) return 1;
    int i = set_index(page_down(s));
    return !(i < g.nset && g.set[i].start < page_up(e));
}

/* How much of [a, e) from a on the agent reaches without opening anything: the rest of one moved piece */
/* (*delta its alias's) or untraced memory up to the next traced or moved memory (*delta 0); 0 when a is */
/* traced but not moved. Lock held.                                                                     */
size_t reach_stretch_locked(uintptr_t a, uintptr_t e, intptr_t *delta)
{
    int k = alias_index(a);
    if (k < g.nalias && g.alias[k].start <= a) {
        *delta = g.alias[k].delta;
        return (g.alias[k].end < e ? g.alias[k].end : e) - a;
    }
    *delta = 0;
    int i = set_index(a);
    if (i < g.nset && g.set[i].start <= a) return 0;
    uintptr_t stop = e;
    if (i < g.nset && g.set[i].start < stop) stop = g.set[i].start;
    if (k < g.nalias && g.alias[k].start < stop) stop = g.alias[k].start;
    return stop - a;
}

/* Gives [s, e) private memory again, with its contents (a forked child; memory about to be mremap'ed, */
/* whose growth a memfd of fixed size could not follow). Its rights are those it had when moved, or   */
/* none while it is traced and recording. Lock held.                                                  */
void alias_make_private_locked(uintptr_t s, uintptr_t e)
{
    int i = alias_index(s);
    while (i < g.nalias && g.alias[i].start < e) {
        struct alias a = g.alias[i];
        uintptr_t cs = a.start > s ? a.start : s, ce = a.end < e ? a.end : e;
        size_t n = ce - cs;
        long p = mt_sys6(SYS_mmap, 0, (long)n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (mt_failed(p)) return;
        /* pages of the memfd never written read as zeroes, as the new memory does: only the others */
        unsigned char vec[512];
        for (size_t done = 0; done < n; done += 512 * (size_t)g.page) {
            size_t len = n - done < 512 * (size_t)g.page ? n - done : 512 * (size_t)g.page;
            int known = mt_sys3(SYS_mincore, (long)(cs + a.delta + done), (long)len, (long)vec) == 0;
            for (size_t q = 0; q < len; q += (size_t)g.page)
                if (!known || (vec[q / (size_t)g.page] & 1))
                    copy_words((uintptr_t)p + done + q, cs + a.delta + done + q, (size_t)g.page);
        }
        mt_sys3(SYS_mprotect, p, n, a.prot);
        mt_sys6(SYS_mremap, p, (long)n, (long)n, MREMAP_MAYMOVE | MREMAP_FIXED, (long)cs, 0);
        if (g.recording) {
            for (uintptr_t q = cs; q < ce; q += g.page)
                if (set_find(q) && !covered_by_opening(q) && !g.all_open) mt_sys3(SYS_mprotect, q, g.page, PROT_NONE);
        }
        alias_forget_locked(cs, ce);
        i = alias_index(ce);
    }
}

/* Drops [s, e) from the set. `restore` gives the memory its rights back (it is still mapped). Lock held. */
void set_remove_locked(uintptr_t s, uintptr_t e, int restore)
{
    int i = set_index(s);
    while (i >= 0 && i < g.nset && g.set[i].start < e) {
        struct range r = g.set[i];
        uintptr_t cs = r.start > s ? r.start : s, ce = r.end < e ? r.end : e;
        if (restore && g.recording) mt_sys3(SYS_mprotect, cs, ce - cs, r.prot);
        emit_range(0, cs, ce, r.kind, r.prot);
        i = span_cut(g.set, &g.nset, sizeof *g.set, set_grow_one, i, s, e);
    }
    LOCK_HELD();
    SET_CHECK();
}

/* Adds [s, e) with the program's rights `prot`; protects it when recording. Lock held. */
void set_add_locked(uintptr_t s, uintptr_t e, int prot, int kind)
{
    int shared = kind & KIND_SHARED;
    kind &= ~KIND_SHARED;
    if (s >= e || !(g.regions & kind) || !(prot & (PROT_READ | PROT_WRITE)) || (prot & PROT_EXEC)) return;
    for (int i = 0; i < g.nstacks; i++) {
        if (g.stacks[i].s < e && s < g.stacks[i].e) { /* the kernel writes signal frames there */
            uintptr_t ss = g.stacks[i].s, se = g.stacks[i].e;
            set_add_locked(s, ss, prot, kind | shared);
            set_add_locked(se, e, prot, kind | shared);
            return;
        }
    }
    set_remove_locked(s, e, 0);
    if (!set_reserve(1)) return;
    if (g.aliases && kind != MT_REGION_FILE && !shared) alias_add_locked(s, e, prot, kind);
    int i = set_index(s);
    mt_memmove(&g.set[i + 1], &g.set[i], sizeof(struct range) * (size_t)(g.nset - i));
    g.set[i] = (struct range){s, e, prot, kind};
    g.nset++;
    SET_CHECK();
    if (g.recording) protect_span(s, e);
    emit_range(1, s, e, kind, prot);
}

int set_covers_locked(uintptr_t s, uintptr_t e)
{
    while (s < e) {
        struct range *r = set_find(s);
        if (!r) return 0;
        s = r->end;
    }
    return 1;
}

/* Opens the traced pages of [s, e) (counted, so overlapping openings by several threads nest). Lock held. */
/* 0 only when no memory is left for the table of openings, and then nothing was opened.               */
int open_locked(uintptr_t s, uintptr_t e)
{
    for (int i = 0; i < g.nopen; i++) {
        if (g.open[i].start == s && g.open[i].end == e) {
            g.open[i].count++;
            return 1;
        }
    }
    if (g.nopen == g.capopen) {
        int cap = g.capopen ? g.capopen * 2 : 256;
        struct opening *n = agent_map(sizeof(struct opening) * (size_t)cap);
        if (!n) return 0; /* out of memory: the caller falls back (a system call opens everything) */
        if (g.open) {
            mt_memcpy(n, g.open, sizeof(struct opening) * (size_t)g.nopen);
            mt_unmap_pages(g.open, sizeof(struct opening) * (size_t)g.capopen);
        }
        g.open = n;
        g.capopen = cap;
    }
    g.open[g.nopen++] = (struct opening){s, e, 1};
    MT_ASSERT(s < e && g.nopen <= g.capopen, "an opening is a span, in a table that holds it");
    /* a window at risk: memory another thread may touch unseen while it is open */
    int i = set_index(s);
    if (g.threads > 1 && i < g.nset && g.set[i].start < e) count(&g.windows);
    for (; i < g.nset && g.set[i].start < e; i++) {
        uintptr_t cs = g.set[i].start > s ? g.set[i].start : s;
        uintptr_t ce = g.set[i].end < e ? g.set[i].end : e;
        mt_sys3(SYS_mprotect, cs, ce - cs, g.set[i].prot);
    }
    return 1;
}

void close_locked(uintptr_t s, uintptr_t e)
{
    int k;
    for (k = 0; k < g.nopen; k++)
        if (g.open[k].start == s && g.open[k].end == e) break;
    if (k == g.nopen) return;
    MT_ASSERT(g.open[k].count > 0, "an opening still listed is open at least once");
    if (--g.open[k].count > 0) return;
    g.open[k] = g.open[--g.nopen];
    if (!g.recording) return;
    int i = set_index(s);
    for (; i < g.nset && g.set[i].start < e; i++) {
        uintptr_t cs = g.set[i].start > s ? g.set[i].start : s;
        uintptr_t ce = g.set[i].end < e ? g.set[i].end : e;
        protect_span(cs, ce);
    }
}

/* Opens (or closes) a span of program memory from normal, non-handler context. */
void open_span(uintptr_t s, uintptr_t e, int open)
{
    if (s >= e) return;
    enter_critical();
    spin_lock(&g.lock);
    if (g.recording) {
        if (open) open_locked(page_down(s), page_up(e));
        else close_locked(page_down(s), page_up(e));
    }
    spin_unlock(&g.lock);
    leave_critical();
}

void protect_all_locked(int on)
{
    for (int i = 0; i < g.nset; i++) {
        if (on) protect_span(g.set[i].start, g.set[i].end);
        else mt_sys3(SYS_mprotect, g.set[i].start, g.set[i].end - g.set[i].start, g.set[i].prot);
    }
}

/* All traced memory open, for a call the agent cannot describe exactly (counted: calls of several      */
/* threads nest). Lock held.                                                                            */
void open_all_locked(void)
{
    if (g.all_open++ == 0 && g.recording) protect_all_locked(0);
}
void close_all_locked(void)
{
    if (--g.all_open == 0 && g.recording) protect_all_locked(1);
}

/* The agent could not map memory for its table of openings (the address space is full: a limit set on */
/* the process from outside, or the machine): the faulting access could never run. Recording stops for */
/* good, everything open, rather than fault forever; said once on standard error. Lock held.           */
void stop_for_memory_locked(void)
{
    static int said;
    if (g.recording) {
        g.recording = 0;
        protect_all_locked(0);
    }
    if (!said) {
        said = 1;
        static const char line[] = "memtrace: the agent could not map memory for its tables (address space full): recording stops here\n";
        mt_sys3(SYS_write, 2, (long)line, sizeof line - 1);
    }
}

/* ------------------------------------------------------------------------------------------------ */
/* Recording on and off                                                                             */

void control(int start, uintptr_t caller)
{
    if (!g.active) return;
    enter_critical();
    spin_lock(&g.lock);
    if (start != g.recording) {
        g.recording = start;
        protect_all_locked(start);
    }
    spin_unlock(&g.lock);
    leave_critical();
    REC(MT_CONTROL, struct mt_control, c);
    c.h.flags = start ? MT_CTL_START : MT_CTL_STOP;
    c.caller = caller;
    emit(&c);
}

EXPORT void memtrace_start(void) { control(1, (uintptr_t)__builtin_return_address(0)); }
EXPORT void memtrace_stop(void) { control(0, (uintptr_t)__builtin_return_address(0)); }
EXPORT void MadT__start(void) { control(1, (uintptr_t)__builtin_return_address(0)); }
EXPORT void MadT__stop(void) { control(0, (uintptr_t)__builtin_return_address(0)); }

/* Copies between our memory and the program's through the kernel, which answers a bad pointer with     */
/* EFAULT instead of a fault in our handler: the program must see the error an untraced run would see. */
long user_transfer(void *ours, uintptr_t theirs, size_t n, int to_program)
{
    struct iovec local = {ours, n}, remote = {(void *)theirs, n};
    long r = mt_sys6(to_program ? SYS_process_vm_writev : SYS_process_vm_readv, g.pid, (long)&local, 1,
                  (long)&remote, 1, 0);
    return r == (long)n ? 0 : -EFAULT;
}

/* Reads program memory that may be protected: opens it for the copy. Lock not held, signals blocked.   */
/* On a bad pointer the copy is zeroes and the result -EFAULT.                                          */
long copy_in(void *dst, uintptr_t src, size_t n)
{
    intptr_t delta;
    spin_lock(&g.lock);
    if (g.aliases && reach_without_opening(src, src + n, &delta)) {
        spin_unlock(&g.lock);
        long r = user_transfer(dst, src + (uintptr_t)delta, n, 0);
        if (r) mt_memzero(dst, n);
        return r;
    }
    int open = g.recording && set_find(src);
    if (open) open_locked(page_down(src), page_up(src + n));
    spin_unlock(&g.lock);
    long r = user_transfer(dst, src, n, 0);
    if (r) mt_memzero(dst, n);
    if (open) {
        spin_lock(&g.lock);
        close_locked(page_down(src), page_up(src + n));
        spin_unlock(&g.lock);
    }
    return r;
}

#ifdef MT_DEBUG
/* MT_DEBUG builds only: breaks an invariant on purpose, so a test sees its assertion fire at the next   */
/* check made in the normal course (launch.DebugBuildTest). "ranges": the traced set's first and last   */
/* entries swap places, which the next change of the set finds out of order.                           */
EXPORT void memtrace_debug_break(const char *what)
{
    if (mt_strncmp(what, "ranges", 7) != 0) return;
    enter_critical();
    spin_lock(&g.lock);
    if (g.nset >= 2) {
        struct range r = g.set[0];
        g.set[0] = g.set[g.nset - 1];
        g.set[g.nset - 1] = r;
    }
    spin_unlock(&g.lock);
    leave_critical();
}
#endif
