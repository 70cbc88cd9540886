/*
 * mt_common.h: what the fault-mode agent (libmemtrace-agent.so, the .c files of agent/) and the
 * compiled-in runtime (libmemtrace-rt.so, agent/runtime/) both need and used to write twice: numbers from the
 * environment, the process's own description (its /proc/self/maps lines, its loaded objects, its own
 * code, the path behind a descriptor) turned into MT_MODULE and MT_MAPPING records, the static arena that
 * serves allocations before the real allocator is known, freestanding string and memory helpers, and
 * the MT_DEBUG assertions. The .c files beside it are compiled into each library, which keeps its own
 * hidden copy (-fvisibility=hidden): nothing here is exported, nothing is shared at run time.
 *
 * How its output reads: the records are the event stream's (include/memtrace_stream.h), built whole
 * with their tail (path, build-id) and padded to 8; each library sends them its own way (the agent's
 * emit() into the ring, the runtime's rt_emit() into the thread's buffer), and sets the thread id.
 *
 * What it gets wrong: see each .c file's header (paths cut at MT_PATH_MAX, a 1 MiB maps file, a 64 KiB
 * boot arena, parse_long's lax digits).
 */
#ifndef MEMTRACE_COMMON_H
#define MEMTRACE_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/types.h>

#include "memtrace_stream.h"
#include "mt_native.h"

/* ---- freestanding helpers (libc's are wrapped, traced or intercepted inside the traced process) ---- */

/* Whether a raw system call's result is an error (-4095..-1); any other value, an mmap address included, is not. */
static inline int mt_failed(long r) { return r < 0 && r > -4096; }

typedef uint64_t __attribute__((may_alias)) mt_word; /* a word of any object, as memcpy's would be */
/* Word by word where both sides are 8-byte aligned (every record is): the byte loop cost a record */
/* 80 stores and 80 loads, a tenth of what the fault handler spends (docs/fault-mode.md).           */
static inline void mt_memcpy(void *d, const void *s, size_t n)
{
    unsigned char *dd = d;
    const unsigned char *ss = s;
    if (!(((uintptr_t)dd | (uintptr_t)ss) & 7)) {
        for (; n >= 8; n -= 8, dd += 8, ss += 8) *(mt_word *)dd = *(const mt_word *)ss;
    }
    while (n--) *dd++ = *ss++;
}
static inline void mt_memmove(void *d, const void *s, size_t n)
{
    unsigned char *dd = d;
    const unsigned char *ss = s;
    if (dd < ss) { while (n--) *dd++ = *ss++; }
    else { dd += n; ss += n; while (n--) *--dd = *--ss; }
}
static inline size_t mt_strlen(const char *s)
{
    size_t n = 0;
    while (s[n]) n++;
    return n;
}
static inline int mt_strncmp(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (a[i] != b[i]) return (unsigned char)a[i] - (unsigned char)b[i];
        if (!a[i]) return 0;
    }
    return 0;
}
static inline void mt_memzero(void *d, size_t n)
{
    volatile unsigned char *dd = d;
    if (!((uintptr_t)dd & 7)) {
        for (; n >= 8; n -= 8, dd += 8) *(volatile mt_word *)dd = 0;
    }
    while (n--) *dd++ = 0;
}

/* ---- memtrace's own mappings: never the program's leak roots (check_block.h, mc_scan_anon) ---------- */

/* One table per process: each memtrace library has a weak, exported copy and the loader binds every
 * library's references to the first one (the agent's or the tracing runtime's), so the check runtime beside
 * the tracing runtime sees the trace buffers too. A range is added when mapped and taken out when unmapped
 * (mt_own_remove, mt_unmap_pages: the kernel hands the hole to the program's next mmap, which the leak scan must
 * see); adjacent ranges merge (mmap maps top-down). Past MT_OWN_MAX ranges `full` is set and the leak scan leaves
 * every anonymous mapping out. */
#define MT_OWN_MAX 1024
struct mt_own {
    uintptr_t start[MT_OWN_MAX], end[MT_OWN_MAX];
    int n, full, lock;
};
__attribute__((weak, visibility("default"))) struct mt_own __memtrace_own;

static inline void mt_own_add(const void *p, size_t n)
{
    struct mt_own *o = &__memtrace_own;
    uintptr_t s = (uintptr_t)p, e = s + ((n + 4095) & ~(size_t)4095);
    if (!p || !n) return;
    while (__atomic_exchange_n(&o->lock, 1, __ATOMIC_ACQUIRE)) __builtin_ia32_pause();
    int last = o->n - 1;
    if (last >= 0 && o->start[last] == e) o->start[last] = s;
    else if (last >= 0 && o->end[last] == s) o->end[last] = e;
    else if (o->n < MT_OWN_MAX) { o->start[o->n] = s; o->end[o->n] = e; o->n++; }
    else o->full = 1;
    __atomic_store_n(&o->lock, 0, __ATOMIC_RELEASE);
}

/* [p, p + n) is unmapped (or about to be): no longer memtrace's. A range it cuts in two takes a second entry, or
 * stays whole when the table has no room (the rest then left out of the scan as before). */
static inline void mt_own_remove(const void *p, size_t n)
{
    struct mt_own *o = &__memtrace_own;
    uintptr_t s = (uintptr_t)p & ~(uintptr_t)4095, e = ((uintptr_t)p + n + 4095) & ~(uintptr_t)4095;
    if (!p || !n) return;
    while (__atomic_exchange_n(&o->lock, 1, __ATOMIC_ACQUIRE)) __builtin_ia32_pause();
    for (int i = 0; i < o->n; i++) {
        if (o->end[i] <= s || e <= o->start[i]) continue;
        if (s <= o->start[i] && o->end[i] <= e) {           /* all of it: the last entry takes its place */
            o->n--;
            o->start[i] = o->start[o->n];
            o->end[i] = o->end[o->n];
            i--;
        } else if (s <= o->start[i]) {
            o->start[i] = e;
        } else if (o->end[i] <= e) {
            o->end[i] = s;
        } else if (o->n < MT_OWN_MAX) {                     /* from its middle: two ranges */
            o->start[o->n] = e;
            o->end[o->n] = o->end[i];
            o->n++;
            o->end[i] = s;
        }
    }
    __atomic_store_n(&o->lock, 0, __ATOMIC_RELEASE);
}

/* Whether [s, e) overlaps a range memtrace mapped (read at exit, after the last mapping: no lock). */
static inline int mt_own_overlaps(uintptr_t s, uintptr_t e)
{
    const struct mt_own *o = &__memtrace_own;
    for (int i = 0; i < o->n; i++)
        if (o->start[i] < e && s < o->end[i]) return 1;
    return 0;
}

/* Where mt_map_pages takes its pages when set: the runtime's region of its own (rt_init.c), so that none of */
/* them lies where the kernel would put the program's next mapping. NULL (the agent, the check library): the */
/* kernel's choice. Each object has its own (hidden).                                                     */
__attribute__((weak, visibility("hidden"))) void *(*mt_pages_from)(size_t n);

/* Anonymous private pages where the kernel puts them, listed as memtrace's own; NULL on failure. */
static inline void *mt_map_pages_anywhere(size_t n)
{
    long p = mt_sys6(SYS_mmap, 0, (long)n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mt_failed(p)) return NULL;
    mt_own_add((void *)p, n);
    return (void *)p;
}

/* Anonymous private pages straight from the kernel (never from the traced allocator); NULL on failure. */
static inline void *mt_map_pages(size_t n)
{
    return mt_pages_from ? mt_pages_from(n) : mt_map_pages_anywhere(n);
}

/* Pages of mt_map_pages (or any range mt_own_add took) back to the kernel. */
static inline void mt_unmap_pages(void *p, size_t n)
{
    mt_own_remove(p, n);
    mt_sys2(SYS_munmap, (long)p, (long)n);
}

/* ---- numbers from the environment (mt_proc.c) ----------------------------------------------------- */

/* The decimal digits s starts with; dflt when s is NULL or empty. */
long mt_parse_long(const char *s, long dflt);

/* ---- allocation stacks (docs/stacks.md) ---------------------------------------------------------- */

/* The return addresses of the stack from the state a function's return to `pc` leaves (rsp, rbp), at   */
/* most max, innermost first: each frame by the call frame information of the code's module             */
/* (.eh_frame, read once per module: mt_unwind.c), tagged MT_FRAME_CFI; by the saved rbp where the code   */
/* has no FDE (untagged: Java keeps such a frame only when the function it came from set rbp up,          */
/* heap.StackFrames). Only the stack between lo and hi is read, going up, never a frame over 1 MiB:      */
/* a wrong rule or rbp ends the walk early, it never faults. No lock, allocation or system call once the  */
/* modules on the way are known (the first walk through a module reads and compiles its .eh_frame).      */
#define MT_FRAME_CFI (1ULL << 63)
int mt_unwind(uintptr_t pc, uintptr_t rsp, uintptr_t rbp, uintptr_t lo, uintptr_t hi, uint64_t *out, int max);
/* A loaded object the walk may pass through: its code's extent and where its .eh_frame_hdr lies (called */
/* by mt_modules_new for each new object; an object over the addresses of an earlier one replaces it).  */
struct dl_phdr_info;
void mt_unwind_add_module(const struct dl_phdr_info *info);
/* Where mt_unwind.c gets the pages its tables keep to the end; NULL: mt_map_pages. The runtime points it at  */
/* rt_map_own, so that the tables are not reported as the program's mappings (a summary's memory regions).   */
extern void *(*mt_unwind_pages)(size_t n);

/* The allocation stack of a wrapper's record: the frames above `caller` into more[], at most depth - 1.   */
/* The wrapper's own frames (the library is built with frame pointers) are followed from fp (its         */
/* innermost frame, __builtin_frame_address(0)) to the one that returns to caller, at most 16 of them;   */
/* from there the program's frames are unwound (mt_unwind). 0 when caller is not among them (a site the  */
/* wrapper was told, check_run.c's new). The stack is the thread's: the main thread's below               */
/* __libc_stack_end, another's below its thread pointer (glibc puts the thread's descriptor at the top of */
/* its stack).                                                                                             */
extern void *__libc_stack_end;
static inline __attribute__((always_inline)) int mt_frames_above(uintptr_t fp, uint64_t caller, int depth, uint64_t *more)
{
    if (depth <= 1) return 0;
    if (depth > MT_STACK_MAX) depth = MT_STACK_MAX;
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0), tp, hi, end = (uintptr_t)__libc_stack_end;
    __asm__("mov %%fs:0, %0" : "=r"(tp));
    if (end > sp && end - sp < (1UL << 30)) hi = end;
    else if (tp > sp && tp - sp < (1UL << 30)) hi = tp;
    else return 0;
    for (int i = 0; i < 16 && fp >= sp && !(fp & 7) && fp + 16 <= hi; i++) {
        uintptr_t next = ((const uintptr_t *)fp)[0], ret = ((const uintptr_t *)fp)[1];
        if (ret == caller) return mt_unwind(caller, fp + 16, next, sp, hi, more, depth - 1);
        if (next <= fp || next - fp > (1UL << 20)) break;
        fp = next;
    }
    return 0;
}

/* The body of an allocation record, as the agent's and the runtime's wrappers both send it: h.flags   */
/* and the fields from fn..a, then the stack of up to depth frames above caller found from fp (the      */
/* wrapper's own frame), and h.size to match; the rest of the header is the sender's.                  */
static inline __attribute__((always_inline)) void mt_alloc_fill(struct mt_alloc_stack *s, int fn, uint64_t caller,
                                                                uint64_t result, uint64_t usable,
                                                                const uint64_t a[6], int depth, uintptr_t fp)
{
    struct mt_alloc *r = &s->a;
    r->h.flags = (uint8_t)fn;
    r->caller = caller;
    r->result = result;
    r->usable = usable;
    for (int i = 0; i < 6; i++) r->a[i] = a[i];
    int more = mt_frames_above(fp, caller, depth, s->more);
    /* stacks asked for but none above caller (code without frame pointers): one 0 word says so, so that the */
    /* reader still names the functions inlined at the call site (docs/stacks.md, "Inlined calls")         */
    if (depth > 1 && more == 0) s->more[more++] = 0;
    r->h.size = (uint16_t)(sizeof(struct mt_alloc) + 8 * more);
}

/* ---- the process described (mt_proc.c) ------------------------------------------------------------ */

/* Bytes of a path a module or mapping record keeps (longer ones are cut). */
#define MT_PATH_MAX 1024

/* One line of /proc/self/maps. */
struct mt_map_line {
    uintptr_t start, end, offset;
    int prot;                   /* PROT_READ|PROT_WRITE|PROT_EXEC */
    int is_private;
    size_t path_len;
    char path[MT_PATH_MAX + 1]; /* NUL-terminated */
};

/* Calls fn for each line of /proc/self/maps, in the file's (address) order; 0, or -1 when it cannot be read. */
int mt_maps_each(void (*fn)(const struct mt_map_line *, void *), void *arg);
/* mt_maps_each reading into the caller's buffer of cap bytes (the runtime's own, so that it is no new line). */
int mt_maps_each_in(char *buf, size_t cap, void (*fn)(const struct mt_map_line *, void *), void *arg);

/* MT_MODULE and MT_MAPPING records with their tails, ready to send (h.tid left 0: the sender's to set). */
struct mt_module_rec {
    struct mt_module m;
    unsigned char tail[64 + MT_PATH_MAX + 8];
};
struct mt_mapping_rec {
    struct mt_mapping m;
    char tail[MT_PATH_MAX + 8];
};
/* Each returns the record's size (m.h.size): the fixed part, the tail, padded to 8. */
size_t mt_module_record(struct mt_module_rec *r, uint64_t bias, const unsigned char *bid, uint32_t bid_len,
                        const char *name, size_t n);
size_t mt_mapping_record(struct mt_mapping_rec *r, const struct mt_map_line *line, int flags);
/* A mapping of file descriptor fd, its path read from /proc/self/fd; 0 when the path cannot be read. */
size_t mt_file_mapping_record(struct mt_mapping_rec *r, uintptr_t start, uintptr_t end, int prot, int fd,
                              off_t off, int flags);

/* A loaded object, as dl_iterate_phdr shows it. */
struct mt_module_info {
    uint64_t bias;
    const unsigned char *build_id;
    uint32_t build_id_len;
    const char *name;           /* the executable's by /proc/self/exe */
    size_t name_len;
};
/* Calls fn for each object loaded since the last call (*reported objects were seen already; updated). */
void mt_modules_new(int *reported, void (*fn)(const struct mt_module_info *, void *), void *arg);
/* The executable PT_LOAD of the object that holds code address `inside` (the library's own code), and */
/* the object's name into path (cap bytes, may be NULL); 1 when found.                                 */
int mt_own_text(const void *inside, uint64_t *start, uint64_t *end, char *path, size_t cap);

/* Puts the descriptors memtrace was started with back on their numbers, from the JVM's socket at path
 * (MEMTRACE_FDS; mt_fds.c). Called before the library opens anything of its own. */
void mt_inherit_fds(const char *path);
/* A close-on-exec copy of fd at the highest free number below min(RLIMIT_NOFILE, 1024), among the 64 top ones */
/* and above fd; -1 when none is free. */
int mt_dup_high(int fd);

/* ---- the boot arena (mt_boot.c) ------------------------------------------------------------------- */

/* Memory for allocations made before the real allocator is known (dlsym's), and for the runtime's      */
/* private ones: aligned to `align` (at least 16, malloc's alignment; at most a page), zero, never reused */
/* nor freed. NULL when full or for a larger alignment.                                                */
void *mt_boot_alloc(size_t n, size_t align);
int mt_boot_owns(const void *p);
/* Bytes from p, a block of the arena, to the end of what the arena handed out: what realloc may copy. */
size_t mt_boot_extent(const void *p);

/* ---- MT_DEBUG: the invariants the headers promise, asserted (mt_debug.c) ---------------------------- */

/* Never returns: "memtrace: invariant broken at FILE:LINE: WHAT (COND)" on standard error (raw write), */
/* then SIGABRT with the default action, so the program dies as abort() would and the test sees 134.   */
void mt_invariant_broken(const char *file, int line, const char *what, const char *cond) __attribute__((noreturn));

#ifdef MT_DEBUG
#define MT_ASSERT(cond, what) \
    do { if (__builtin_expect(!(cond), 0)) mt_invariant_broken(__FILE__, __LINE__, (what), #cond); } while (0)
#define MT_DEBUG_ONLY(...) __VA_ARGS__
#else
#define MT_ASSERT(cond, what) do { } while (0)
#define MT_DEBUG_ONLY(...)
#endif

/* MT_DEBUG builds also export memtrace_debug_break(const char *what), which breaks one invariant on  */
/* purpose for a test (agent: traced.c, "ranges"; runtime: runtime/rt_debug.c, "buffer").             */

#endif
