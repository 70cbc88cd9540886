/*
 * rw_apply.c: `memtrace run --mode rewrite` inside the traced process (docs/rewriting.md). Part of
 * libmemtrace-rt.so, which memtrace preloads in that mode. At start, in the runtime's constructor and so
 * before any code of the executable runs and while the program has one thread, it reads each plan file
 * named by MEMTRACE_REWRITE_PLAN (':' between them; written by org.memtrace.rewrite in memtrace's own cache
 * directory: the executable's and those of the libraries loaded at start, libc included), finds the loaded
 * object the plan is for (by GNU build-id; a plan without one is the main program's), maps the plan's
 * trampolines within rel32 reach of it, every plan's before any plan is applied (their link-time place
 * first, else that place moved by a multiple
 * of 16 MB, else below or above the object in 16 MB steps; MAP_FIXED_NOREPLACE), moves every rel32
 * between trampolines and module by the text's displacement (the plan's fix-ups, and the jumps it
 * writes), fills the cursor slot with the offset of
 * __memtrace_cursor from the thread pointer, and writes each planned `jmp rel32` over the first five bytes
 * of its instruction. The plan's int3 places (the fallback for instructions no jump can patch, and the
 * rt_sigprocmask syscalls that must not block SIGTRAP) become a table handed to rw_trap.c before their
 * `int3` bytes are written with the jumps; an int3 place the planner punned (Puns.java) then gets a `jmp
 * rel32` over its own bytes instead, to a stub page mapped where the next instructions' bytes make the rel32
 * lead (pun_segment), when the bytes and the page allow. The trampolines record through the runtime exactly as compiled-in probes do (they are
 * its GOT-form group probes), so the .mtr file is the same kind of file; rw_report adds an MT_MODULE per
 * trampoline file at the bias that places its text, and the reader finds through it the site table that
 * names the module's instructions (the file names its module by build-id).
 *
 * libc is rewritten while the constructor's own call chain runs in it: from the first mprotect to the last
 * jump nothing here calls libc. From then on, rewritten library code the runtime runs for itself (zstd's
 * memcpy while a buffer is encoded) records into a sink of reserved pages (rw_sink_enter), and no writer
 * thread is started (rw_planned): a new thread begins in libc with every signal blocked, where a probe's
 * first record could not fault into the runtime.
 *
 * It takes MEMTRACE_REWRITE_PLAN out of the environment and puts LD_PRELOAD back to the user's value
 * (MEMTRACE_LD_PRELOAD, which memtrace passes; none when absent), so exec'd descendants run untraced.
 *
 * How it reads: silent when it applied the plans or when a plan is for another program (a child that
 * exec'd something else and kept LD_PRELOAD itself); one `memtrace: rewrite:` line on stderr per plan that
 * is a loaded object's but cannot be applied (that object is not patched then, and records none).
 *
 * Libraries opened later by dlopen are rewritten by rw_dlopen.c through rw_apply_loaded, and forgotten
 * at dlclose through rw_forget.
 *
 * What it gets wrong: ld.so and the runtime are not rewritten; code that reads its own text
 * sees the jumps; a fault of the moved instruction reports a pc inside the trampoline to the program's
 * handler; a page that a code segment shares with another segment gets the code segment's protection back
 * after patching; code that runs before the constructor (preinit_array, libc's start-up) or after the
 * runtime's end (exit handlers) runs unrewritten. A punned jump's stub page that lies in the brk heap's
 * way (more than 32 MB above the break) makes brk fail once the heap reaches it (malloc then uses mmap). Stub pages
 * are a memfd's, each a mapping of its own in /proc/self/maps, many of them of the same memfd page (each sees
 * the others' stubs, which none of its puns jump to). A stub page that meets another module's text keeps
 * its puns' int3s. The runtime's own libc calls while the program records
 * (dlsym in its wrappers) are recorded as the calling thread's. Without a writer thread, the thread whose
 * buffer is full compresses it.
 */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "../runtime/rt.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define RW_MAGIC 0x314e4c505752544dULL /* "MTRWPLN1" */
#define RW_HEADER 104
#define RW_TEXT_ALIGN 4096ULL /* the text's offset in the plan file is a multiple: it is mapped from there (PlanFile.TEXT_ALIGN) */
#define RW_PATCH 24
#define RW_TRAP 40

struct rw_header {
    uint64_t magic;
    uint32_t version, patches;
    uint64_t text_address, text_size, cursor_slot;
    uint32_t module_id_len, tramp_id_len, tramp_path_len, reasons;
    uint32_t left[8];
    uint32_t rewritten, fixups;
    uint32_t traps, trapped; /* int3 places; instructions traced through them (the summary's) */
};
_Static_assert(sizeof(struct rw_header) == RW_HEADER, "plan header");

struct rw_patch {
    uint64_t address;
    unsigned char old[8], jump[8];
};
_Static_assert(sizeof(struct rw_patch) == RW_PATCH, "plan patch");

/* An int3 over the instruction at address (link-time) whose first byte is old; its trampoline at tramp. */
/* pun_len > 0: a punned jump instead when it can be (pun_stubs): pun[0..pun_len) over the instruction,   */
/* reaching the stub at link-time stub through a rel32 whose high bytes are the next instructions'.       */
struct rw_trap_place {
    uint64_t address, tramp, stub;
    unsigned char old, flags, pun_len, pad; /* flags: RW_TRAP_SIGMASK */
    uint32_t accesses;
    unsigned char pun[4], pad2[4];
};
_Static_assert(sizeof(struct rw_trap_place) == RW_TRAP, "plan trap");

#define RW_MODULES 256 /* at once: dlclose frees an entry */
#define RW_PENDING 128 /* start-up plans whose texts are placed before any is applied (rw_apply) */

/* The trampoline files applied, reported as modules (rw_report): each at the bias that places its text. */
static struct rw_applied {
    uint64_t bias;          /* the trampoline file's, reported */
    uint64_t module_bias;   /* the module's: dlclose finds its entry by it (rw_forget) */
    uint64_t text, text_size; /* the trampolines' pages */
    unsigned char id[64];
    uint32_t id_len;
    char path[1024];
    uint32_t path_len;
    uint64_t *stub_pages;  /* the punned jumps' stub pages (pun_stubs), unmapped with the module */
    uint32_t stub_count, stub_cap;
} rw[RW_MODULES];
static int rw_count;

/* Where rewritten library code the runtime runs for itself (zstd's memcpy) records: nowhere (rw_sink_enter). */
static char *rw_sink;
#define RW_SINK (256UL << 20)
#define RW_SINK_HINT 0x600000000000UL /* 96 TB: out of rel32 reach of every module (a non-PIE executable at 4 MB, PIEs and libraries at 0x5.../0x7f...), above the check shadow [0x7fff8000, 0x10007fff8000) and the agent heap (32 TB) */

static void say(const char *what, const char *detail)
{
    char msg[1400];
    size_t at = 0;
    const char *parts[] = {"memtrace: rewrite: ", what, detail, "; that module runs unrewritten, untraced\n"};
    for (int i = 0; i < 4; i++)
        for (const char *p = parts[i]; *p && at < sizeof msg - 1; p++) msg[at++] = *p;
    mt_sys3(SYS_write, 2, msg, at);
}

/* dl_iterate_phdr's search for the object a plan is for: the main program (the first object) when the */
/* plan has no build-id, else the object with the plan's build-id (never the runtime itself).           */
struct rw_find {
    const unsigned char *id;
    uint32_t id_len;
    uint64_t self;
    int found;
    struct dl_phdr_info info;
};

static int same(const unsigned char *a, const unsigned char *b, size_t n);

static int find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct rw_find *f = arg;
    if (!f->id_len) {
        f->info = *info;
        f->found = 1;
        return 1;
    }
    uint32_t len;
    const unsigned char *id = mt_build_id(info, &len);
    if (!id || len != f->id_len || !same(id, f->id, len)) return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && f->self >= info->dlpi_addr + ph->p_vaddr && f->self < info->dlpi_addr + ph->p_vaddr + ph->p_memsz)
            return 0;
    }
    f->info = *info;
    f->found = 1;
    return 1;
}

static uint64_t pad8(uint64_t n) { return (n + 7) & ~7ULL; }

static int same(const unsigned char *a, const unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

/* Where the trampoline text starts in a plan file whose header is h: a page boundary after the ids. */
static uint64_t text_offset(const struct rw_header *h)
{
    uint64_t ids = pad8((uint64_t)h->module_id_len + h->tramp_id_len + h->tramp_path_len);
    return (RW_HEADER + ids + RW_TEXT_ALIGN - 1) & ~(RW_TEXT_ALIGN - 1);
}

/* Where the plan files are mapped while they are applied (a hint; the next one after the last): not under */
/* the libraries, where the kernel would put them, and where their texts (ModuleRewrite.spread) and stub    */
/* pages go; all of the start-up plans are mapped at once (rw_apply). 92 TB: more than 2 GB from every      */
/* module (a PIE at 85 TB, libraries from 112 TB), between the stub file's view (88 TB) and the sink (96 TB). */
#define RW_PLAN_HINT 0x5c0000000000ULL
static uint64_t plan_next = RW_PLAN_HINT;

/* The plan file's bytes, mapped read-only and private (NULL when it cannot be trusted or mapped); *len its  */
/* size, *fd_out the file, open, for apply_at to map the trampoline text from (the caller closes it). Mapped, */
/* not read: libc's plan is 13 MB, and reading it cost a copy into as many fresh pages; memtrace replaces a   */
/* plan by renaming a new file over it, never by writing into it, so the mapping stays whole. What follows   */
/* the text (patches, fix-ups, int3 places: all of it is read) is faulted in at once; the text is not.      */
static unsigned char *read_plan(const char *path, size_t *len, int *fd_out)
{
    int fd = (int)mt_sys4(SYS_openat, AT_FDCWD, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0);
    if (fd < 0) { say("cannot open the plan ", path); return NULL; }
    struct stat st;
    if (mt_sys2(SYS_fstat, fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != (uid_t)mt_sys0(SYS_getuid)
        || (st.st_mode & 022) || st.st_size < RW_HEADER) {
        mt_sys1(SYS_close, fd);
        say("refused the plan (not a regular file of this user that only it can write) ", path);
        return NULL;
    }
    size_t n = (size_t)st.st_size;
    long m = mt_sys6(SYS_mmap, (long)plan_next, n, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == (long)plan_next) plan_next += (n + RW_TEXT_ALIGN - 1) & ~(RW_TEXT_ALIGN - 1);
    if (m < 0 && m > -4096) {
        mt_sys1(SYS_close, fd);
        say("cannot read the plan ", path);
        return NULL;
    }
    const struct rw_header *h = (const void *)m;
    uint64_t rest = (text_offset(h) + pad8(h->text_size)) & ~(RW_TEXT_ALIGN - 1); /* check_plan judges the numbers */
    if (rest < n) mt_sys3(SYS_madvise, m + (long)rest, n - rest, 22 /* MADV_POPULATE_READ, Linux 5.14; ignored before */);
    *len = n;
    *fd_out = fd;
    return (unsigned char *)m;
}

/* Where a patch's e9 is: after the prefixes a jump is padded with (Puns.java), at most 3; 4 when it has none */
/* (check_plan refuses that plan).                                                                         */
static uint32_t jump_opcode(const struct rw_patch *p)
{
    uint32_t e = 0;
    while (e < 3 && p->jump[e] != 0xe9) e++;
    return p->jump[e] == 0xe9 ? e : 4;
}

/* A `jmp rel8` (eb) to dead padding of the module, where the plan's `jmp rel32` to the trampoline is    */
/* (PatchPlanner's neighbour eviction, docs/rewriting.md "Dead padding"): 2 bytes, not moved with the text. */
static int short_jump(const struct rw_patch *p) { return p->jump[0] == 0xeb; }

/* How many bytes a patch writes (and must find as planned) */
static uint32_t jump_bytes(const struct rw_patch *p) { return short_jump(p) ? 2 : jump_opcode(p) + 5; }

/* The executable segment of the object that holds [a, a+n), or NULL. */
static const ElfW(Phdr) *code_bytes(const struct dl_phdr_info *exe, uint64_t a, uint64_t n)
{
    for (int i = 0; i < exe->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &exe->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && a >= ph->p_vaddr && a + n <= ph->p_vaddr + ph->p_filesz) return ph;
    }
    return NULL;
}

static const ElfW(Phdr) *code_segment(const struct dl_phdr_info *exe, uint64_t a) { return code_bytes(exe, a, 5); }

static int prot_of(uint32_t flags)
{
    return (flags & PF_R ? PROT_READ : 0) | (flags & PF_W ? PROT_WRITE : 0) | (flags & PF_X ? PROT_EXEC : 0);
}

/* The user's LD_PRELOAD back, or none, and MEMTRACE_REWRITE_PLAN / MEMTRACE_LD_PRELOAD out (docs/trust.md): */
/* the program and what it execs see the environment they would see untraced.                            */
static void restore_environment(void)
{
    static char preload[4096 + 16];
    extern char **environ;
    const char *saved = getenv("MEMTRACE_LD_PRELOAD");
    int keep = 0;
    if (saved) {
        size_t at = 0;
        for (const char *p = "LD_PRELOAD="; *p; p++) preload[at++] = *p;
        for (const char *p = saved; *p && at < sizeof preload - 1; p++) preload[at++] = *p;
        preload[at] = 0;
        keep = 1;
    }
    char **w = environ;
    for (char **r = environ; r && *r; r++) {
        if (rt_strncmp(*r, "MEMTRACE_REWRITE_PLAN=", 22) == 0 || rt_strncmp(*r, "MEMTRACE_LD_PRELOAD=", 20) == 0
            || rt_strncmp(*r, "MEMTRACE_REWRITE_SOCKET=", 24) == 0)
            continue;
        if (rt_strncmp(*r, "LD_PRELOAD=", 11) == 0) {
            if (!keep) continue;
            *w++ = preload;
            continue;
        }
        *w++ = *r;
    }
    if (w) *w = NULL;
}

/* The span [*lo, *hi) of the object's loadable segments, at run time. */
static void span(const struct dl_phdr_info *o, uint64_t *lo, uint64_t *hi)
{
    *lo = ~0ULL;
    *hi = 0;
    for (int i = 0; i < o->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &o->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        uint64_t s = o->dlpi_addr + ph->p_vaddr, e = s + ph->p_memsz;
        if (s < *lo) *lo = s;
        if (e > *hi) *hi = e;
    }
}

/* Whether text at [t, t+size) reaches every byte of [lo, hi) and back with a rel32 (with a margin). */
static int reaches(uint64_t t, uint64_t size, uint64_t lo, uint64_t hi)
{
    const int64_t limit = 0x7ff00000LL;
    return (int64_t)(hi - t) < limit && (int64_t)(t + size - lo) < limit && (int64_t)(hi - t) > -limit && (int64_t)(t + size - lo) > -limit;
}

/* size bytes of fresh pages within rel32 reach of [lo, hi): the link-time place `want` first, then `want`   */
/* moved by a multiple of 16 MB, nearest first, below before above; then below the object and above it in   */
/* steps of 16 MB (MAP_FIXED_NOREPLACE: nothing mapped is ever replaced). A displacement of a multiple of    */
/* 16 MB changes only the top byte of each rel32 between module and trampolines, which no punned jump reads  */
/* (a pun reads at most the e9 and the low three rel32 bytes of the jump after it: docs/rewriting.md,        */
/* "Punned jumps"); any other displacement would leave the puns that read a jump's bytes with their int3.    */
/* The end of the addresses a trampoline text or stub page may take: below the main thread's stack and the   */
/* room the kernel keeps above its mappings for the stack to grow (the stack's rlimit, at least the 128 MB   */
/* and at most the 16 GB it takes itself, and the 1 MB guard gap), set by rw_apply on the main thread before */
/* any plan. A fixed 0x7fff00000000 left nothing within 2 GB of libc and ld.so when the layout is not        */
/* randomized (gdb, setarch -R: libraries at 0x7ffff7...), and those modules ran untraced.                  */
static uint64_t rw_ceiling = 0x7fff00000000ULL;

static void set_ceiling(void)
{
    struct { uint64_t cur, max; } lim;
    uint64_t room = 128ULL << 20;
    if (mt_sys2(SYS_getrlimit, 3 /* RLIMIT_STACK */, &lim) == 0 && lim.cur > room)
        room = lim.cur < (16ULL << 30) ? lim.cur : 16ULL << 30;
    uint64_t sp = (uint64_t)(uintptr_t)__builtin_frame_address(0);
    if (sp > room + (1ULL << 20) + 0x10000) rw_ceiling = (sp & ~0xfffULL) - room - (1ULL << 20);
}

/* Whether [at, at+size) may hold a trampoline text or stub page: above the first 64 KB, below the ceiling. */
static int placeable(uint64_t at, uint64_t size) { return at >= 0x10000 && at + size <= rw_ceiling && at + size > at; }

uint64_t rw_place(uint64_t want, uint64_t size, uint64_t lo, uint64_t hi)
{
    const uint64_t step = 16ULL << 20, page = (uint64_t)rt.page;
    for (int k = -1; k < 4 * 120; k++) {
        uint64_t at;
        if (k < 0) at = want;
        else if (k < 2 * 120) {
            uint64_t d = (uint64_t)(k / 2 + 1) * step;
            if (!want || (k % 2 == 0 && d > want)) continue;
            at = k % 2 == 0 ? want - d : want + d;
        } else {
            int j = k - 2 * 120;
            if (j % 2 == 0) at = ((lo & ~(page - 1)) - size - (uint64_t)(j / 2) * step) & ~(page - 1);
            else at = (((hi + page - 1) & ~(page - 1)) + (uint64_t)(j / 2) * step);
        }
        if (!placeable(at, size) || !reaches(at, size, lo, hi)) continue;
        long m = mt_sys6(SYS_mmap, at, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        if (m == (long)at) { mt_own_add((void *)m, size); return at; }
        if (m > 0) mt_sys2(SYS_munmap, m, size); /* a kernel before 4.17 takes the flag for a hint */
    }
    return 0;
}

/* The plan's layout, checked against its length: NULL when it is sound, else what is wrong. */
static const char *check_plan(const unsigned char *plan, size_t len)
{
    const struct rw_header *h = (const void *)plan;
    uint64_t text_at = text_offset(h), patches_at = text_at + pad8(h->text_size);
    uint64_t fixups_at = patches_at + (uint64_t)h->patches * RW_PATCH;
    uint64_t traps_at = fixups_at + pad8(4ULL * h->fixups);
    if (h->magic != RW_MAGIC || h->version != 5 || h->tramp_id_len > sizeof rw[0].id || h->tramp_path_len >= sizeof rw[0].path
        || h->module_id_len > 64 || h->text_size > len || h->cursor_slot - h->text_address + 8 > h->text_size
        || traps_at + (uint64_t)h->traps * RW_TRAP != len)
        return "the plan is damaged or of another version: ";
    const uint32_t *fix = (const void *)(plan + fixups_at);
    for (uint32_t i = 0; i < h->fixups; i++)
        if ((uint64_t)fix[i] + 4 > h->text_size) return "the plan is damaged (a fix-up outside its text): ";
    const struct rw_patch *p = (const void *)(plan + patches_at);
    for (uint32_t i = 0; i < h->patches; i++)
        if (!short_jump(&p[i]) && jump_opcode(&p[i]) > 3) return "the plan is damaged (a jump without its e9): ";
    /* the handler's binary search needs the places in increasing order, each trampoline inside the text */
    const struct rw_trap_place *t = (const void *)(plan + traps_at);
    for (uint32_t i = 0; i < h->traps; i++)
        if ((i && t[i].address <= t[i - 1].address) || t[i].tramp < h->text_address || t[i].tramp >= h->text_address + h->text_size
            || t[i].pun_len > 4)
            return "the plan is damaged (its int3 places out of order or their trampolines outside its text): ";
    return NULL;
}

/* The punned jumps' stub pages of one module being applied: a set of the pages its puns need (page|4 not   */
/* tried yet, page|1 mapped by us, page|2 refused), and the break's reserve, which no stub takes (a brk heap */
/* grows there).                                                                                           */
/* The reserve is the 32 MB above the break, not more: the kernel starts a break anywhere up to 1 GB after */
/* the executable's end, and python3 (non-PIE) has 1-byte puns whose stubs have one address each, some 5  */
/* per MB from 257 MB to 2 GB past its end; refusing 256 MB above the break kept 1,000 of them on average */
/* (up to 5,500) in their int3, 32 MB keeps 66 (at most 350). A stub above the reserve stops brk there:   */
/* glibc's malloc then goes on with mmap (1 MB or more at a time, the main arena noncontiguous), so the   */
/* program runs as it would; only a program that calls sbrk itself sees ENOMEM sooner than natively.      */
/* The pages themselves are a memfd's: each mapped read and execute (shared) where its stub goes, and       */
/* written through one writable view of the whole file (alias), which is unmapped once the module is applied. */
/* Anonymous pages mapped writable and then mprotect'ed executable cost libc's 4,000 stub pages as many      */
/* faults and ~700 mprotects, each a TLB flush; a stub page that is never run is now never faulted in.      */
/* A stub page holds one to a few 14-byte stubs (a 1- or 2-byte pun's stub has one address), so the stub    */
/* pages share the memfd's pages: each is mapped from a memfd page whose 16-byte slots its own stubs leave  */
/* free in every other page mapped from it (stub_plan). libc's 1,192 stub pages take 25 memfd pages: each    */
/* page of the memfd cost a page allocated and zeroed (MADV_POPULATE_WRITE), 14 % of sqlite3's start.       */
struct rw_stubs {
    uint64_t *seen;
    uint32_t *slot; /* seen[k]'s page in the memfd */
    uint32_t cap;
    uint64_t brk_lo, brk_hi;
    struct rw_applied *a;
    unsigned char *alias; /* the memfd's pages, writable, `pages` of them */
    int fd;
    uint32_t pages;
};

#define RW_HEAP_ROOM (32ULL << 20) /* Puns.HEAP_ROOM */
#define RW_STUB_SCAN 64u /* memfd pages a stub page's slots are tried in (the last ones made) before a new one */

/* The entry of the set for page: its index, at an empty entry when the page is not in it. */
static uint32_t stub_entry(const struct rw_stubs *s, uint64_t page)
{
    uint32_t k = (uint32_t)(((page >> 12) * 0x9E3779B97F4A7C15ULL) >> 40) & (s->cap - 1);
    while (s->seen[k] && (s->seen[k] & ~7ULL) != page) k = (k + 1) & (s->cap - 1);
    return k;
}

/* Where the stub page at page is written (in the alias), or NULL when it is not ours: mapped now, or before. */
static unsigned char *stub_page(struct rw_stubs *s, uint64_t page)
{
    uint32_t k = stub_entry(s, page);
    if (!(s->seen[k] & 4)) return s->seen[k] & 1 ? s->alias + (uint64_t)s->slot[k] * (uint64_t)rt.page : NULL;
    int ok = 0;
    if (!(page < s->brk_hi && page + (uint64_t)rt.page > s->brk_lo) && placeable(page, (uint64_t)rt.page)
        && s->a->stub_count < s->a->stub_cap) {
        long m = mt_sys6(SYS_mmap, page, rt.page, PROT_READ | PROT_EXEC, MAP_SHARED | MAP_FIXED_NOREPLACE, s->fd,
                         (uint64_t)s->slot[k] * (uint64_t)rt.page);
        if (m == (long)page) {
            ok = 1;
            s->a->stub_pages[s->a->stub_count++] = page;
        } else if (m > 0) mt_sys2(SYS_munmap, m, rt.page); /* a kernel before 4.17 takes the flag for a hint */
    }
    s->seen[k] = page | (ok ? 1 : 2);
    return ok ? s->alias + (uint64_t)s->slot[k] * (uint64_t)rt.page : NULL;
}

/* The memfd of a module's stub pages and its writable view, `pages` pages made at once: 0, or -1 when there */
/* is none (every pun keeps its int3). MFD_EXEC where the kernel knows it (6.3 on, whose vm.memfd_noexec may */
/* seal a memfd made without it against execution); MFD_CLOEXEC: a program's exec does not inherit it.      */
#define RW_ALIAS_HINT 0x580000000000UL /* 88 TB: not under the libraries, where the kernel would put it, and their stubs go */
static int stub_file(struct rw_stubs *s, uint32_t pages)
{
    const unsigned int mfd_exec = 0x10; /* MFD_EXEC */
    long fd = mt_sys2(SYS_memfd_create, (long)RW_STUBS_NAME, MFD_CLOEXEC | mfd_exec);
    if (fd == -EINVAL) fd = mt_sys2(SYS_memfd_create, (long)RW_STUBS_NAME, MFD_CLOEXEC); /* before 6.3 */
    if (fd < 0) return -1;
    uint64_t size = (uint64_t)pages * (uint64_t)rt.page;
    long m = mt_sys2(SYS_ftruncate, fd, size) == 0 ? mt_sys6(SYS_mmap, RW_ALIAS_HINT, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : -1;
    if (m < 0 && m > -4096) m = -1;
    if (m == -1) {
        mt_sys1(SYS_close, fd);
        return -1;
    }
    /* every page at once: a fault each, where the stubs are written, cost more than placing them */
    mt_sys3(SYS_madvise, m, size, 23 /* MADV_POPULATE_WRITE, Linux 5.14; ignored before */);
    s->fd = (int)fd;
    s->alias = (unsigned char *)m;
    s->pages = pages;
    return 0;
}

/*
 * The stub pages of the module's puns (n places at plan_traps, bias) entered in the set, each given a page of
 * the memfd where no other stub page mapped from it has a stub in the same 16-byte slots (first fit among
 * the last RW_STUB_SCAN memfd pages), and the memfd made: 0, or -1 without memory or memfd (every pun keeps
 * its int3 then). Every planned pun's pages, whether or not its bytes turn out as planned: a slot too many
 * costs nothing. The set (seen, slot, cap) is allocated by the caller.
 */
static int stub_plan(struct rw_stubs *s, const unsigned char *plan_traps, uint32_t n, uint64_t bias)
{
    const struct rw_trap_place *tplace = (const void *)plan_traps;
    uint64_t page = (uint64_t)rt.page;
    uint32_t most = 0;
    for (uint32_t i = 0; i < n; i++) most += tplace[i].pun_len ? 2 : 0;
    /* per stub page (in the order first met): its slots and its entry; per memfd page: the slots taken */
    size_t bytes = ((size_t)most * (32 + 4 + 32) + page - 1) & ~(size_t)(page - 1);
    uint64_t (*want)[4] = rt_map(bytes);
    if (!want) return -1;
    uint32_t *entry = (uint32_t *)(want + most);
    uint64_t (*taken)[4] = (void *)(entry + most);
    uint32_t used = 0, pages = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!tplace[i].pun_len) continue;
        uint64_t stub = bias + tplace[i].stub;
        for (uint64_t p = stub & ~(page - 1); p <= ((stub + 13) & ~(page - 1)); p += page) {
            if (!p) continue; /* no stub page at 0: stub_page finds none and the pun keeps its int3 */
            uint32_t k = stub_entry(s, p), d;
            if (!s->seen[k]) {
                s->seen[k] = p | 4;
                s->slot[k] = used;
                entry[used++] = k;
            }
            d = s->slot[k];
            uint64_t from = stub > p ? stub - p : 0, to = stub + 14 - p < page ? stub + 14 - p : page; /* [from, to) */
            for (uint64_t b = from >> 4; b <= (to - 1) >> 4; b++) want[d][b >> 6] |= 1ULL << (b & 63);
        }
    }
    for (uint32_t d = 0; d < used; d++) {
        uint32_t j = pages > RW_STUB_SCAN ? pages - RW_STUB_SCAN : 0;
        for (; j < pages; j++)
            if (!((taken[j][0] & want[d][0]) | (taken[j][1] & want[d][1]) | (taken[j][2] & want[d][2]) | (taken[j][3] & want[d][3])))
                break;
        if (j == pages) pages++;
        for (int w = 0; w < 4; w++) taken[j][w] |= want[d][w];
        s->slot[entry[d]] = j;
    }
    mt_sys2(SYS_munmap, want, bytes);
    return pages ? stub_file(s, pages) : 0;
}

/* The set of pages tried and the memfd's writable view unmapped, the memfd closed (its pages stay mapped). */
static void stub_done(struct rw_stubs *s)
{
    uint64_t page = (uint64_t)rt.page;
    if (s->seen) mt_sys2(SYS_munmap, s->seen, ((uint64_t)s->cap * 12 + page - 1) & ~(page - 1));
    if (s->alias) mt_sys2(SYS_munmap, s->alias, (uint64_t)s->pages * page);
    if (s->fd >= 0) mt_sys1(SYS_close, s->fd);
    s->seen = NULL;
    s->alias = NULL;
    s->fd = -1;
}

/* What became of the plans' puns in this process (MT_FALLBACK, rw_trap_report): written, kept their int3 */
/* because the bytes were not as planned, kept it because no stub page could be had.                      */
uint64_t rw_puns[3];

static void kept_bytes(void) { __atomic_add_fetch(&rw_puns[1], 1, __ATOMIC_RELAXED); }

/*
 * The punned jumps of the segment ph (docs/rewriting.md, "Punned jumps"), after its jumps and int3s are
 * written, from the last place to the first (an earlier pun's rel32 may read a later one's bytes): each where
 * the bytes after the instruction are, now, the ones its rel32 was planned with and its stub's pages could be
 * mapped at the module's bias. The stub (`jmp *0(%rip)` and the trampoline's address) first, then the
 * instruction's own bytes but the first, then the first (0xcc before; 0xe9 after, or a prefix before it): a
 * thread that reaches the instruction meanwhile traps as before. Where it cannot be, the int3 stays.
 */
static void pun_segment(struct rw_stubs *s, const unsigned char *plan_traps, uint32_t n, const struct dl_phdr_info *o,
                        const ElfW(Phdr) *ph, uint64_t text, uint64_t text_address)
{
    const struct rw_trap_place *tplace = (const void *)plan_traps;
    uint64_t bias = o->dlpi_addr, page = (uint64_t)rt.page;
    for (uint32_t i = n; i-- > 0;) {
        const struct rw_trap_place *t = &tplace[i];
        if (!t->pun_len || code_bytes(o, t->address, 1) != ph) continue; /* no pun, or another segment's */
        uint32_t e = 0; /* the e9 after the prefixes a pun may start with (Puns.paddedTrap) */
        while (e < t->pun_len && t->pun[e] != 0xe9) e++;
        if (e == t->pun_len || code_bytes(o, t->address, e + 5) != ph) { kept_bytes(); continue; }
        volatile unsigned char *c = (volatile unsigned char *)(bias + t->address);
        unsigned char b[8];
        for (uint32_t k = 0; k < e + 5; k++) b[k] = k < t->pun_len ? t->pun[k] : c[k];
        int32_t rel;
        rt_memcpy(&rel, b + e + 1, 4);
        if (c[0] != 0xcc || t->address + e + 5 + (uint64_t)(int64_t)rel != t->stub) { kept_bytes(); continue; }
        uint64_t stub = bias + t->stub;
        unsigned char *w0 = stub_page(s, stub & ~(page - 1)), *w1 = w0 ? stub_page(s, (stub + 13) & ~(page - 1)) : NULL;
        if (!w1) {
            __atomic_add_fetch(&rw_puns[2], 1, __ATOMIC_RELAXED);
            continue;
        }
        unsigned char x[14] = {0xff, 0x25, 0, 0, 0, 0};
        uint64_t to = text + (t->tramp - text_address);
        rt_memcpy(x + 6, &to, 8);
        for (uint64_t k = 0; k < 14; k++) /* through the alias: the stub may end on the next page */
            (((stub + k) ^ stub) < page ? w0 : w1)[(stub + k) & (page - 1)] = x[k];
        for (int k = t->pun_len - 1; k >= 1; k--) c[k] = t->pun[k];
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        c[0] = t->pun[0];
        __atomic_add_fetch(&rw_puns[0], 1, __ATOMIC_RELAXED);
    }
}

/* The trampoline text of the plan (mapped at plan, open as fd) at the pages [at, at+size) that rw_place     */
/* reserved, moved by `moved` from its link-time place, its cursor slot filled, read and execute: NULL, or  */
/* why not. Mapped from the file, private: the page cache's pages, shared with every other run, and only    */
/* the pages a thread runs are ever faulted in; copying it (libc's 9 MB, python3's 24 MB in all) was most  */
/* of a warm start's CPU. The pages written here (the cursor slot's; all of them when the fix-ups move      */
/* every rel32) become the process's own, so the file is never written; the bytes past the text on its last */
/* page are the plan's patches, never run. Where the cache's file system refuses to execute its files       */
/* (noexec), the text is copied into the reserved pages as before.                                          */
static const char *fill_text(uint64_t at, uint64_t size, int fd, const unsigned char *plan, int64_t moved)
{
    const struct rw_header *h = (const void *)plan;
    uint64_t text_at = text_offset(h), fixups_at = text_at + pad8(h->text_size) + (uint64_t)h->patches * RW_PATCH;
    const uint32_t *fix = (const void *)(plan + fixups_at);
    unsigned char *text = (unsigned char *)at;
    uint64_t tp;
    __asm__("mov %%fs:0, %0" : "=r"(tp));
    for (int copy = 0; copy < 2; copy++) {
        long m = copy ? mt_sys6(SYS_mmap, at, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0)
                      : mt_sys6(SYS_mmap, at, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd, text_at);
        if (m != (long)at) return "cannot map the trampolines: ";
        /* every page written at once (Linux 5.14; ignored before), not a fault each: moved, each has fix-ups */
        if (copy || (moved && h->fixups)) mt_sys3(SYS_madvise, at, size, 23 /* MADV_POPULATE_WRITE */);
        if (copy) rt_memcpy(text, plan + text_at, h->text_size);
        for (uint32_t i = 0; i < h->fixups && moved; i++) { /* at its link-time place the text is right as it is */
            int32_t v;
            rt_memcpy(&v, text + fix[i], 4);
            v = (int32_t)((int64_t)v - moved);
            rt_memcpy(text + fix[i], &v, 4);
        }
        /* initial-exec TLS: the cursor's offset from the thread pointer is the same in every thread */
        *(uint64_t *)(text + (h->cursor_slot - h->text_address)) = (uint64_t)(uintptr_t)&__memtrace_cursor - tp;
        if (mt_sys3(SYS_mprotect, at, size, PROT_READ | PROT_EXEC) == 0) return NULL;
    }
    return "cannot make the trampolines executable: ";
}

/* The trampolines of the text at [at, at+size) armed for access stacks (rw_arm.c): their table, then their */
/* int3s; none without memory for the table (nothing written then).                                         */
static void arm_text(const unsigned char *plan, uint64_t at, uint64_t size, int64_t moved, const struct rw_patch *p,
                    const struct rw_trap_place *tplace, uint64_t bias)
{
    const struct rw_header *h = (const void *)plan;
    if (!h->patches && !h->traps) return; /* nothing planned (a --check plan of code that only calls) */
    size_t bytes = ((size_t)(h->patches + h->traps) * sizeof(struct rw_arm_entry) + rt.page - 1) & ~((size_t)rt.page - 1);
    struct rw_arm_entry *e = rt_map(bytes);
    if (!e) return;
    /* PatchPlanner's evictions: a `jmp rel8` at an instruction to dead padding where the `jmp rel32` to its */
    /* trampoline is; that trampoline stands for the instruction, not for the padding (by padding address)  */
    uint32_t n = 0, evictions = 0;
    for (uint32_t i = 0; i < h->patches; i++) evictions += short_jump(&p[i]);
    size_t ebytes = ((size_t)evictions * sizeof *e + rt.page - 1) & ~((size_t)rt.page - 1);
    struct rw_arm_entry *ev = evictions ? rt_map(ebytes) : NULL;
    if (evictions && !ev) { mt_sys2(SYS_munmap, e, bytes); return; }
    for (uint32_t i = 0, k = 0; i < h->patches; i++)
        if (short_jump(&p[i])) {
            ev[k].at = p[i].address + 2 + (uint64_t)(int64_t)(int8_t)p[i].jump[1];
            ev[k++].insn = p[i].address;
        }
    rw_arm_sort(ev, evictions);
    for (uint32_t i = 0; i < h->patches + h->traps; i++) {
        uint64_t to, insn;
        if (i < h->patches) {
            if (short_jump(&p[i])) continue;
            uint32_t k = jump_opcode(&p[i]);
            int32_t rel;
            rt_memcpy(&rel, p[i].jump + k + 1, 4);
            to = p[i].address + k + 5 + (uint64_t)(int64_t)rel + (uint64_t)moved + bias; /* the jump as written */
            insn = p[i].address;
            uint32_t a = 0, b = evictions;
            while (a < b) {
                uint32_t m = a + (b - a) / 2;
                if (ev[m].at < insn) a = m + 1;
                else b = m;
            }
            if (a < evictions && ev[a].at == insn) insn = ev[a].insn;
            insn += bias;
        } else {
            const struct rw_trap_place *t = &tplace[i - h->patches];
            if (t->flags & RW_TRAP_SIGMASK) continue; /* the handler makes the call: no trampoline runs */
            to = at + (t->tramp - h->text_address);
            insn = bias + t->address;
        }
        /* a probe that saves registers starts with `lea -128(%rsp),%rsp`, one in dead registers with its last  */
        /* site's `lea EA,A` (TrampolineWriter): rw_arm emulates either, as any REX.W lea                    */
        if (to < at || to + 15 > at + size || !rw_arm_lea((const unsigned char *)to, *(const unsigned char *)to)) continue;
        e[n].at = to;
        e[n].insn = insn;
        e[n].runs = 0;
        e[n].byte = *(const unsigned char *)to;
        e[n].flags = 0;
        n++;
    }
    rw_arm_sort(e, n);
    uint32_t m = 0; /* one entry per trampoline */
    for (uint32_t i = 0; i < n; i++)
        if (!m || e[m - 1].at != e[i].at) e[m++] = e[i];
    int ok = m && rw_arm_add(bias, e, m);
    if (ok && mt_sys3(SYS_mprotect, at, size, PROT_READ | PROT_WRITE) == 0) {
        for (uint32_t i = 0; i < m; i++) *(volatile unsigned char *)e[i].at = 0xcc;
        mt_sys3(SYS_mprotect, at, size, PROT_READ | PROT_EXEC);
    } else if (ok) rw_arm_forget(bias);
    mt_sys2(SYS_munmap, e, bytes);
    if (ev) mt_sys2(SYS_munmap, ev, ebytes);
}

/* The text's pages [at, at+size) reserved for a plan that is not applied after all: given back. */
static const char *unreserve(uint64_t at, uint64_t size, const char *why)
{
    if (at) mt_sys2(SYS_munmap, at, size);
    return why;
}

/* The pages of the plan's text (size bytes, page-rounded) at its link-time place for the object o, else   */
/* the nearest rw_place finds: 0 when there is no room.                                                    */
static uint64_t reserve_text(const struct rw_header *h, const struct dl_phdr_info *o, uint64_t *size)
{
    uint64_t page = (uint64_t)rt.page, lo, hi;
    span(o, &lo, &hi);
    *size = (h->text_size + page - 1) & ~(page - 1);
    return rw_place(o->dlpi_addr + h->text_address, *size, lo, hi);
}

/*
 * A checked plan applied to the loaded object o: NULL when its jumps are written, else why not (nothing
 * of the object patched then, or, for "cannot write", the segments before it). *quiet is set when the
 * failure is no error (the executable's plan without a build-id met another program's bytes). The text goes
 * to `reserved`, the pages reserve_text took for it (given back when the plan is not applied), or, when 0,
 * where reserve_text finds room now.
 */
static const char *apply_at(const unsigned char *plan, int fd, const char *path, const struct dl_phdr_info *o, int *quiet,
                            uint64_t reserved)
{
    const struct rw_header *h = (const void *)plan;
    uint64_t text_at = text_offset(h), patches_at = text_at + pad8(h->text_size);
    uint64_t fixups_at = patches_at + (uint64_t)h->patches * RW_PATCH;
    uint64_t traps_at = fixups_at + pad8(4ULL * h->fixups);
    uint64_t page = (uint64_t)rt.page, bias = o->dlpi_addr;
    uint64_t want = bias + h->text_address, size = (h->text_size + page - 1) & ~(page - 1);
    *quiet = 0;
    if (rw_count == RW_MODULES) return unreserve(reserved, size, "too many rewritten modules; not applied: ");
    const struct rw_patch *p = (const void *)(plan + patches_at);
    for (uint32_t i = 0; i < h->patches; i++)
        if (!code_bytes(o, p[i].address, jump_bytes(&p[i]))
            || !same((const void *)(o->dlpi_addr + p[i].address), p[i].old, jump_bytes(&p[i]))) {
            *quiet = !h->module_id_len; /* without build-ids, differing bytes are another program */
            return unreserve(reserved, size, "the module's code differs from its plan at an instruction: ");
        }
    const struct rw_trap_place *tplace = (const void *)(plan + traps_at);
    for (uint32_t i = 0; i < h->traps; i++)
        if (!code_bytes(o, tplace[i].address, 1) || *(const unsigned char *)(o->dlpi_addr + tplace[i].address) != tplace[i].old) {
            *quiet = !h->module_id_len;
            return unreserve(reserved, size, "the module's code differs from its plan at an instruction: ");
        }
    uint64_t at = reserved ? reserved : reserve_text(h, o, &size);
    if (!at) return "no room for the trampolines within 2 GB of the module: ";
    /* the text's displacement from its link-time place: every rel32 between it and the module changes by it */
    int64_t moved = (int64_t)(at - want);
    const char *why = fill_text(at, size, fd, plan, moved);
    if (why) {
        mt_sys2(SYS_munmap, at, size);
        return why;
    }
    /* the int3 fallback's table, at run time, before any int3 is written (rw_trap.c) */
    if (h->traps) {
        struct rw_trap_entry *e = rt_map((size_t)h->traps * sizeof *e);
        if (!e) {
            mt_sys2(SYS_munmap, at, size);
            return "no memory for the int3 fallback's table: ";
        }
        for (uint32_t i = 0; i < h->traps; i++) {
            e[i].at = bias + tplace[i].address;
            e[i].to = at + (tplace[i].tramp - h->text_address);
            e[i].accesses = tplace[i].accesses;
            e[i].flags = tplace[i].flags;
        }
        int ok = rw_trap_add(bias, e, h->traps);
        mt_sys2(SYS_munmap, e, ((size_t)h->traps * sizeof *e + page - 1) & ~(page - 1));
        if (!ok) {
            mt_sys2(SYS_munmap, at, size);
            return "too many modules with int3 places; not applied: ";
        }
    }
    /* access stacks (rw_arm.c): each trampoline's first byte an int3 for its first entries, so a branch   */
    /* straight to a trampoline (docs/rewriting.md) traps too; only one that starts with the probe's lea   */
    /* without memory for its table a module is traced all the same, its accesses without callers */
    if (rt.stack_depth > 1 && rt.access_stacks) arm_text(plan, at, size, moved, p, tplace, bias);
    /* From here the module's own code may be running through trampolines, libc's included: nothing below */
    /* calls into libc (raw system calls and the runtime's own copies only) until every jump is written.    */
    struct rw_applied *a = &rw[rw_count];
    a->text = 0; /* set once a segment is patched: its trampolines must stay then */
    /* the punned jumps' stub pages: at most two per place; the set of pages tried, four slots per page */
    struct rw_stubs stubs = {0, 0, 0, 0, 0, a, 0, -1, 0};
    a->stub_pages = NULL;
    a->stub_count = a->stub_cap = 0;
    uint32_t puns = 0;
    for (uint32_t i = 0; i < h->traps; i++) puns += tplace[i].pun_len != 0;
    if (puns) {
        for (stubs.cap = 16; stubs.cap < 8 * puns; stubs.cap *= 2) {}
        stubs.seen = rt_map((size_t)stubs.cap * 12);
        stubs.slot = stubs.seen ? (uint32_t *)(stubs.seen + stubs.cap) : NULL;
        a->stub_pages = rt_map((size_t)puns * 16);
        if (stubs.seen && a->stub_pages && stub_plan(&stubs, plan + traps_at, h->traps, bias) == 0) a->stub_cap = 2 * puns;
        else { /* no memory: every place keeps its int3 */
            stub_done(&stubs);
            if (a->stub_pages) mt_sys2(SYS_munmap, a->stub_pages, ((size_t)puns * 16 + page - 1) & ~(page - 1));
            a->stub_pages = NULL;
            stubs.cap = 0;
            __atomic_add_fetch(&rw_puns[2], puns, __ATOMIC_RELAXED);
        }
        stubs.brk_lo = (uint64_t)mt_sys1(SYS_brk, 0);
        stubs.brk_hi = stubs.brk_lo + RW_HEAP_ROOM;
    }
    for (int s = 0; s < o->dlpi_phnum; s++) {
        const ElfW(Phdr) *ph = &o->dlpi_phdr[s];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        uint64_t from = (bias + ph->p_vaddr) & ~(page - 1), to = (bias + ph->p_vaddr + ph->p_memsz + page - 1) & ~(page - 1);
        if (mt_sys3(SYS_mprotect, from, to - from, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
            if (!a->text) mt_sys2(SYS_munmap, at, size); /* else segments patched before stay: their trampolines stay mapped */
            stub_done(&stubs);
            return "cannot write the module's code (mprotect refused): ";
        }
        /* the copy-on-write of every code page the jumps go into, at once rather than a fault each */
        mt_sys3(SYS_madvise, from, to - from, 23 /* MADV_POPULATE_WRITE */);
        for (uint32_t i = 0; i < h->patches; i++) {
            if (code_segment(o, p[i].address) != ph) continue;
            if (short_jump(&p[i])) { /* within the module: the same wherever the trampolines went */
                rt_memcpy((void *)(bias + p[i].address), p[i].jump, 2);
                continue;
            }
            unsigned char jump[8];
            uint32_t e = jump_opcode(&p[i]);
            rt_memcpy(jump, p[i].jump, e + 5);
            int32_t rel;
            rt_memcpy(&rel, jump + e + 1, 4);
            rel = (int32_t)((int64_t)rel + moved); /* reach was checked for the whole module by rw_place() */
            rt_memcpy(jump + e + 1, &rel, 4);
            rt_memcpy((void *)(bias + p[i].address), jump, e + 5);
        }
        for (uint32_t i = 0; i < h->traps; i++)
            if (code_bytes(o, tplace[i].address, 1) == ph) *(volatile unsigned char *)(bias + tplace[i].address) = 0xcc;
        if (stubs.cap) pun_segment(&stubs, plan + traps_at, h->traps, o, ph, at, h->text_address);
        mt_sys3(SYS_mprotect, from, to - from, prot_of(ph->p_flags));
        a->text = at;
    }
    stub_done(&stubs); /* the stubs written: no writable view of them is left */
    rw_count++;
    a->bias = bias + (uint64_t)moved; /* the trampoline file's sites, where its text is; it names the module's */
    a->module_bias = bias;
    a->text = at;
    a->text_size = size;
    a->id_len = h->tramp_id_len;
    rt_memcpy(a->id, plan + RW_HEADER + h->module_id_len, h->tramp_id_len);
    a->path_len = h->tramp_path_len;
    rt_memcpy(a->path, plan + RW_HEADER + h->module_id_len + h->tramp_id_len, h->tramp_path_len);
    (void)path;
    return NULL;
}

/* A start-up plan read and its module found, its text's pages reserved (rw_apply's first pass). */
struct rw_pending {
    const char *path;
    unsigned char *plan;
    size_t len;
    int fd;
    struct dl_phdr_info info;
    uint64_t text, text_size;
};

/* The plan at path read and checked, and the loaded object it is for found: 1, or 0 when it is not applied */
/* (nothing left open or mapped then); silent when no loaded object is its module.                         */
static int find_one(const char *path, struct rw_pending *w)
{
    w->path = path;
    w->text = 0;
    w->plan = read_plan(path, &w->len, &w->fd);
    if (!w->plan) return 0;
    const struct rw_header *h = (const void *)w->plan;
    const char *why = check_plan(w->plan, w->len);
    if (why) { say(why, path); goto done; }
    struct rw_find f = {w->plan + RW_HEADER, h->module_id_len, (uint64_t)(uintptr_t)rw_apply, 0, {0}};
    dl_iterate_phdr(find_object, &f);
    /* another program (an exec'd child inherits the environment): not ours to rewrite, and not an error */
    if (!f.found) goto done;
    if (!h->module_id_len) { /* the executable's plan, made without a build-id: the bytes tell */
        uint32_t id_len;
        if (mt_build_id(&f.info, &id_len) && id_len) goto done;
    }
    w->info = f.info;
    return 1;
done:
    mt_sys2(SYS_munmap, w->plan, w->len);
    mt_sys1(SYS_close, w->fd);
    return 0;
}

/* The plan found by find_one applied to its object (at its reserved text, when there is one), then closed. */
static void apply_one(struct rw_pending *w)
{
    int quiet;
    const char *why = apply_at(w->plan, w->fd, w->path, &w->info, &quiet, w->text);
    if (why && !quiet) say(why, w->path);
    mt_sys2(SYS_munmap, w->plan, w->len);
    mt_sys1(SYS_close, w->fd);
}

/* The plan at path applied to the object o, which dlopen has just mapped (rw_dlopen.c): NULL or why not. */
const char *rw_apply_loaded(const char *path, const struct dl_phdr_info *o)
{
    size_t len;
    int fd;
    unsigned char *plan = read_plan(path, &len, &fd);
    if (!plan) return "the plan cannot be read or is not memtrace's";
    const struct rw_header *h = (const void *)plan;
    const char *why = check_plan(plan, len);
    uint32_t id_len;
    const unsigned char *id = mt_build_id(o, &id_len);
    if (!why && (!id || id_len != h->module_id_len || !same(id, plan + RW_HEADER, id_len))) why = "the plan is for another build-id";
    int quiet;
    if (!why) why = apply_at(plan, fd, path, o, &quiet, 0);
    mt_sys2(SYS_munmap, plan, len);
    plan_next = RW_PLAN_HINT;
    mt_sys1(SYS_close, fd);
    return why;
}

/* The trampolines of the module that was at bias, which dlclose unmapped: unmapped too, its entry freed. */
void rw_forget(uint64_t bias)
{
    for (int i = 0; i < rw_count; i++) {
        if (rw[i].module_bias != bias) continue;
        rw_trap_forget(bias);
        rw_arm_forget(bias);
        if (rw[i].text) mt_sys2(SYS_munmap, rw[i].text, rw[i].text_size);
        for (uint32_t k = 0; k < rw[i].stub_count; k++) mt_sys2(SYS_munmap, rw[i].stub_pages[k], rt.page);
        if (rw[i].stub_pages) mt_sys2(SYS_munmap, rw[i].stub_pages, ((size_t)rw[i].stub_cap * 8 + rt.page - 1) & ~((size_t)rt.page - 1));
        rw[i] = rw[--rw_count];
        return;
    }
}

/* The latest trampoline file applied, reported as a module (after its library's own MT_MODULE). */
void rw_report_last(void)
{
    if (rw_count) rt_report_module(rw[rw_count - 1].bias, rw[rw_count - 1].id, rw[rw_count - 1].id_len, rw[rw_count - 1].path, rw[rw_count - 1].path_len);
}

void rw_apply(void)
{
    const char *list = getenv("MEMTRACE_REWRITE_PLAN");
    if (!list || !*list) return;
    set_ceiling(); /* here, on the main thread's stack, in the runtime's constructor */
    static char plans[16384];
    size_t n = 0;
    for (; list[n] && n < sizeof plans - 1; n++) plans[n] = list[n];
    plans[n] = 0;
    static char socket[256];
    const char *sock = getenv("MEMTRACE_REWRITE_SOCKET");
    size_t k = 0;
    for (; sock && sock[k] && k < sizeof socket - 1; k++) socket[k] = sock[k];
    socket[k] = 0;
    restore_environment();
    /* a list of plans, ':' between them (memtrace's cache paths have none): the executable's first. Every   */
    /* text is placed before any plan is applied: a module's punned jumps' stub pages lie anywhere within    */
    /* 2 GB of it, often on another module's link-time text place, and a text that must move has every page */
    /* copied (fill_text); a stub page that meets a text keeps its pun's int3 instead ("no stub page").     */
    static struct rw_pending pending[RW_PENDING];
    int found = 0;
    for (char *p = plans; *p;) {
        char *e = p;
        while (*e && *e != ':') e++;
        int last = !*e;
        *e = 0;
        if (*p) {
            if (found == RW_PENDING) apply_one(&pending[--found]); /* more plans than places: one applied early */
            struct rw_pending *w = &pending[found];
            if (find_one(p, w)) {
                w->text = reserve_text((const void *)w->plan, &w->info, &w->text_size);
                found++;
            }
        }
        if (last) break;
        p = e + 1;
    }
    for (int i = 0; i < found; i++) apply_one(&pending[i]);
    plan_next = RW_PLAN_HINT; /* every plan unmapped: a dlopen'ed library's maps there again */
    /* rewritten library code run by the runtime's own threads (the writer's zstd calls memcpy) records here: */
    /* mapped once the plans are applied and far from every module (a hint, 96 TB), as its 256 MB would     */
    /* otherwise lie where the kernel puts them, under the libraries, where their punned jumps' stub pages go */
    long sink = rw_sink ? (long)rw_sink : mt_sys6(SYS_mmap, RW_SINK_HINT, RW_SINK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    rw_sink = sink > 0 ? (char *)sink : NULL;
    if (rw_sink) mt_own_add(rw_sink, RW_SINK);
    /* libraries opened later: rewritten inside dlopen, before their constructors (rw_dlopen.c) */
    rw_dlopen_init(socket[0] ? socket : NULL);
}

int rw_active(void) { return rw_count > 0; }

int rw_planned(void)
{
    if (rw_count) return 1;
    const char *list = getenv("MEMTRACE_REWRITE_PLAN");
    return list && *list;
}

char *rw_sink_enter(void)
{
    char *saved = __memtrace_cursor;
    if (rw_count && rw_sink) __memtrace_cursor = rw_sink;
    return saved;
}

void rw_sink_leave(char *saved)
{
    if (rw_count && rw_sink) __memtrace_cursor = saved;
}

void rw_report(void)
{
    for (int i = 0; i < rw_count; i++) rt_report_module(rw[i].bias, rw[i].id, rw[i].id_len, rw[i].path, rw[i].path_len);
}
