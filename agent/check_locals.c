/*
 * check_locals.c: `memtrace run --check`'s stack variables and source lines (docs/check.md, "Stack variables"),
 * for a binary nobody rebuilt: it has no redzones between its locals, so their extents come from its DWARF,
 * which memtrace read at launch (org.memtrace.symbols.DwarfLocals) and handed over as a file named by
 * MEMTRACE_CHECK_FRAMES (created O_EXCL 0600 by memtrace, opened here O_NOFOLLOW, every count checked against
 * its size before use). Layout, little-endian, addresses link-time (the executable's load bias is added here):
 *   "MTLOCAL1", u32 functions, variables, rows, files, string bytes
 *   functions {u64 low, u64 high, u32 name, u32 first variable, u32 variables, u32 0}  sorted by low
 *   variables {i64 offset from the frame's CFA (%rbp + 16), u64 size, u32 name, u32 declaration line}
 *   rows      {u64 start, i32 file (-1: a sequence's end), u32 line}                  the line table, sorted
 *   files     {u32 name};  then the strings
 *   and, from the next multiple of 8, the inlined calls' table (check/check_inline.h), when the executable has any
 * Only functions that keep a frame pointer are listed, so a frame's CFA is its %rbp + 16.
 *
 * The check is Spindle's object-level one where run --check's fault mode gets control with a stack pointer in
 * hand: memcpy, memmove and memset (wrappers.c, check_run.c's check_block), and strcpy, strcat, strncpy,
 * strncat, sprintf, snprintf, vsprintf, vsnprintf, which the agent wraps here for a destination on the
 * stack (the bytes they will write measured first, as the compiled-in checker measures them). The frame the pointer lies in is
 * found on the caller's frame-pointer chain (each frame [previous CFA, its CFA), the innermost from the
 * wrapper's own stack pointer up); a pointer inside a variable must keep the whole range inside it (inside
 * any one of the variables that hold it: gcc may give two scopes one slot); a pointer in no variable but
 * between two of the same frame (padding, saved registers) belongs to the one above when the range runs into
 * it (an underflow: the pointer came from it), else to the nearer one (an overflow past the one below).
 * strcat and strncat are checked by the bytes they append, from the destination's terminator. Reported as the compiled-in checker does:
 *   memtrace: stack overflow: <stack:source@copy>+50 (a variable of 50 bytes, declared at line 9 of copy) read
 *   99 bytes by memcpy, 0 bytes past its end, at plain-c-O0+4661, thread 8104
 * check_line_of gives the file:line of an address of the executable, for a report's frames.
 *
 * What it gets wrong: direct loads and stores to the stack are not seen at all (the stack is not traced: each
 * push and call would fault), only the wrapped functions' ranges (gcc expands a memcpy or memset of a small
 * constant size inline even at -O0: not seen); other libc functions (stpcpy, wide ones; gets, fgets and
 * scanf are check_input.c's, read check_run.c's) and libc calling itself are not checked; a range that starts below a frame's lowest variable (an alloca, a VLA, outgoing
 * arguments) is not checked; frames without a frame pointer (-O1 and up) end the walk, as does any function
 * the table lacks (a library's); a frame's variables are all taken as live whatever their scope.
 */
#include <sys/stat.h>

#include "agent.h"
#include "check/check.h"

int mc_snprintf(char *d, size_t n, const char *fmt, ...);

struct lfn { uint64_t low, high; uint32_t name, first, count, pad; };
struct lvar { int64_t off; uint64_t size; uint32_t name, line; };
struct lrow { uint64_t start; int32_t file; uint32_t line; };

static struct {
    const struct lfn *fn;
    const struct lvar *var;
    const struct lrow *row;
    const uint32_t *file;
    const char *str;
    uint32_t nfn, nvar, nrow, nfile, nstr;
    const unsigned char *tail; /* the inlined calls' table, or NULL */
    size_t ntail;
    uintptr_t bias;
    int ready;
} lc;

/* MEMTRACE_CHECK_FRAMES, taken before init.c scrubs the environment */
static char frames_path[4096];
void check_locals_path(const char *p)
{
    size_t n = p ? mt_strlen(p) : 0;
    if (n && n < sizeof frames_path) mt_memcpy(frames_path, p, n + 1);
}

static int exe_bias(struct dl_phdr_info *info, size_t size, void *arg)
{
    *(uintptr_t *)arg = info->dlpi_addr;
    return 1; /* the first is the executable */
}

static const char *str_at(uint32_t at) { return at < lc.nstr ? lc.str + at : ""; }

void check_locals_init(void)
{
    if (!frames_path[0]) return;
    long fd = mt_sys3(SYS_open, frames_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC, 0);
    if (fd < 0) return;
    struct stat st;
    long len = mt_sys2(SYS_fstat, fd, &st) == 0 && S_ISREG(st.st_mode) ? (long)st.st_size : -1;
    long map = len >= 28 ? mt_sys6(SYS_mmap, 0, len, PROT_READ, MAP_PRIVATE, fd, 0) : -1;
    mt_sys1(SYS_close, fd);
    if (map < 0 && map > -4096) return;
    const unsigned char *f = (const unsigned char *)map;
    if (mt_strncmp((const char *)f, "MTLOCAL1", 8) != 0) return;
    uint32_t h[5];
    mt_memcpy(h, f + 8, sizeof h);
    uint64_t need = 28 + (uint64_t)h[0] * sizeof(struct lfn) + (uint64_t)h[1] * sizeof(struct lvar) +
                    (uint64_t)h[2] * sizeof(struct lrow) + (uint64_t)h[3] * 4;
    uint64_t end = need + h[4], tail = (end + 7) & ~(uint64_t)7;
    if (end > (uint64_t)len || (h[4] && f[end - 1] != 0)) return; /* a table that does not add up: none */
    if (tail < (uint64_t)len) { lc.tail = f + tail; lc.ntail = (size_t)((uint64_t)len - tail); }
    const unsigned char *at = f + 28;
    lc.fn = (const struct lfn *)at; at += (size_t)h[0] * sizeof(struct lfn);
    lc.var = (const struct lvar *)at; at += (size_t)h[1] * sizeof(struct lvar);
    lc.row = (const struct lrow *)at; at += (size_t)h[2] * sizeof(struct lrow);
    lc.file = (const uint32_t *)at; at += (size_t)h[3] * 4;
    lc.str = (const char *)at;
    lc.nfn = h[0]; lc.nvar = h[1]; lc.nrow = h[2]; lc.nfile = h[3]; lc.nstr = h[4];
    for (uint32_t i = 0; i < lc.nfn; i++)
        if (lc.fn[i].first > lc.nvar || lc.fn[i].count > lc.nvar - lc.fn[i].first) return;
    for (uint32_t i = 0; i < lc.nrow; i++)
        if (lc.row[i].file >= (int32_t)lc.nfile) return;
    dl_iterate_phdr(exe_bias, &lc.bias);
    lc.ready = 1;
}

/* The inlined calls' table that came behind the locals (check_report.c's frames), and the executable's bias. */
const unsigned char *check_locals_inlines(size_t *n, uintptr_t *bias)
{
    *n = lc.ready ? lc.ntail : 0;
    *bias = lc.bias;
    return lc.ready ? lc.tail : NULL;
}

/* The listed function whose code holds pc, or NULL. */
static const struct lfn *fn_of(uintptr_t pc)
{
    if (!lc.ready || pc < lc.bias) return NULL;
    uint64_t a = pc - lc.bias;
    uint32_t lo = 0, hi = lc.nfn;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (lc.fn[mid].low <= a) lo = mid + 1; else hi = mid;
    }
    if (!lo || a >= lc.fn[lo - 1].high) return NULL;
    return &lc.fn[lo - 1];
}

/* "file:line" of an address of the executable, or NULL; the text lives until 16 more are asked for (a */
/* report asks for one per frame, under the report lock).                                              */
const char *check_line_of(uintptr_t pc)
{
    static char ring[16][512];
    static unsigned next;
    if (!lc.ready || !lc.nrow || pc < lc.bias) return NULL;
    uint64_t a = pc - lc.bias;
    uint32_t lo = 0, hi = lc.nrow;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (lc.row[mid].start <= a) lo = mid + 1; else hi = mid;
    }
    if (!lo || lo == lc.nrow || lc.row[lo - 1].file < 0) return NULL; /* before the first, past the last, in a gap */
    char *out = ring[next++ % 16];
    mc_snprintf(out, sizeof ring[0], "%s:%u", str_at(lc.file[lc.row[lo - 1].file]), lc.row[lo - 1].line);
    return out;
}

/* The variable of frame f (CFA cfa) that [p, p+n) belongs to, and whether the range fits in it. Returns */
/* NULL when p is in no variable and below the frame's lowest one (not an object the table knows).       */
static const struct lvar *object_of(const struct lfn *f, uintptr_t cfa, uintptr_t p, size_t n, int *fits)
{
    const struct lvar *in = NULL, *below = NULL, *above = NULL;
    uintptr_t below_end = 0, above_beg = 0;
    *fits = 0;
    for (uint32_t i = f->first; i < f->first + f->count; i++) {
        const struct lvar *v = &lc.var[i];
        uintptr_t beg = cfa + (intptr_t)v->off, end = beg + v->size;
        if (p >= beg && p < end) {
            if (n <= end - p) { *fits = 1; return v; }
            if (!in || v->size > in->size) in = v;
        } else if (end <= p && (!below || end > below_end)) {
            below = v;
            below_end = end;
        } else if (beg > p && (!above || beg < above_beg)) {
            above = v;
            above_beg = beg;
        }
    }
    if (in) return in;
    if (!below) return NULL; /* an alloca, a VLA or outgoing arguments: no extent known */
    /* in the padding between two: a range that runs into the one above came from a pointer before it (an */
    /* underflow, as ASan's redzone there says); one that does not belongs to the nearer                  */
    if (above && (n > above_beg - p || above_beg - p < p - below_end)) return above;
    return below;
}

/* The range [p, p+n) a block function of the program (pc: its call's return address) reads or writes, when */
/* it is on the stack in a frame the table describes: against that frame's variable. Returns whether it was */
/* reported.                                                                                                 */
static int stack_range_from(uintptr_t p, size_t n, int write, uintptr_t pc, const char *by, uintptr_t rbp, uintptr_t low);

int check_stack_range(uintptr_t p, size_t n, int write, uintptr_t pc, const char *by)
{
    if (!lc.ready || !n) return 0;
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    if (p < here || p - here > (64UL << 20)) return 0; /* not on this thread's stack */
    /* the caller's %rbp: saved by the frame whose return address is pc (the wrapper's), found upwards */
    uintptr_t fp = here, rbp = 0;
    for (int i = 0; i < 8; i++) {
        uint64_t w[2];
        if ((fp & 7) || user_transfer(w, fp, 16, 0)) return 0;
        if (w[1] == pc) { rbp = w[0]; break; }
        if (w[0] <= fp || w[0] - fp > (1UL << 20)) return 0;
        fp = w[0];
    }
    return stack_range_from(p, n, write, pc, by, rbp, here);
}

/* The same for a system call's buffer (check_syscall_out): pc is the libc function's return address into the */
/* program and rbp the program's %rbp at the call (libc's leaf wrapper keeps it), sp its stack pointer.        */
int check_stack_range_at(uintptr_t p, size_t n, int write, uintptr_t pc, const char *by, uintptr_t rbp, uintptr_t sp)
{
    if (!lc.ready || !n || p < sp || p - sp > (64UL << 20)) return 0;
    return stack_range_from(p, n, write, pc, by, rbp, sp);
}

/* the frames from the one whose %rbp is rbp (its code at pc) upwards: the variable p..p+n leaves, reported */
static int stack_range_from(uintptr_t p, size_t n, int write, uintptr_t pc, const char *by, uintptr_t rbp, uintptr_t low)
{
    uintptr_t at = pc;
    for (int depth = 0; rbp && depth < 256; depth++) {
        const struct lfn *f = fn_of(at - 1);
        if (!f || (rbp & 7) || rbp < low) return 0;
        uintptr_t cfa = rbp + 16;
        if (p < cfa) {
            int fits;
            const struct lvar *v = object_of(f, cfa, p, n, &fits);
            if (!v || fits) return 0;
            struct mc_extent x;
            mt_memzero(&x, sizeof x);
            x.beg = cfa + (intptr_t)v->off;
            x.size = v->size;
            x.region = "stack";
            const char *fn = str_at(f->name);
            mc_snprintf(x.name, sizeof x.name, "<stack:%s@%s>", str_at(v->name), mc_spell(fn));
            if (v->line) mc_snprintf(x.desc, sizeof x.desc, "a variable of %lu bytes, declared at line %u of %s",
                                     (unsigned long)v->size, v->line, mc_spell(fn));
            else mc_snprintf(x.desc, sizeof x.desc, "a variable of %lu bytes of %s", (unsigned long)v->size, mc_spell(fn));
            check_report_extent(p, n, write, pc, by, &x);
            return 1;
        }
        uint64_t w[2];
        if (user_transfer(w, rbp, 16, 0) || w[0] <= rbp || w[0] - rbp > (1UL << 20)) return 0;
        low = cfa;
        at = w[1];
        rbp = w[0];
    }
    return 0;
}

/* ---- the string functions that write to a stack buffer ---- */

/* The agent wraps them only for this: a destination on the calling thread's stack, in a checked run, is */
/* measured (the bytes the call will write, as the compiled-in checker measures them) and checked against */
/* its frame's variable before the real function runs. Anything else goes straight to libc's (heap       */
/* destinations are checked by their faults as before). The agent's own calls (FROM_AGENT) and those    */
/* made inside its handlers pass through.                                                                */
#define CALLER ((uintptr_t)__builtin_return_address(0))
static struct {
    char *(*strcpy)(char *, const char *);
    char *(*strcat)(char *, const char *);
    char *(*strncpy)(char *, const char *, size_t);
    char *(*strncat)(char *, const char *, size_t);
    int (*vsprintf)(char *, const char *, va_list);
    int (*vsnprintf)(char *, size_t, const char *, va_list);
} rl;
#define REAL_OF(f) (*({ if (!rl.f) rl.f = (typeof(rl.f))dlsym(RTLD_NEXT, #f); &rl.f; }))

/* At the agent's start (init.c, while dlsym's allocations still come from the boot arena): the real functions, */
/* so that no wrapper looks one up later inside a signal handler (the agent's own reports format through them). */
void check_locals_resolve(void)
{
    rl.strcpy = (typeof(rl.strcpy))dlsym(RTLD_NEXT, "strcpy");
    rl.strcat = (typeof(rl.strcat))dlsym(RTLD_NEXT, "strcat");
    rl.strncpy = (typeof(rl.strncpy))dlsym(RTLD_NEXT, "strncpy");
    rl.strncat = (typeof(rl.strncat))dlsym(RTLD_NEXT, "strncat");
    rl.vsprintf = (typeof(rl.vsprintf))dlsym(RTLD_NEXT, "vsprintf");
    rl.vsnprintf = (typeof(rl.vsnprintf))dlsym(RTLD_NEXT, "vsnprintf");
}

static int stack_dest(const void *d, uintptr_t caller)
{
    if (!chk.on || !lc.ready || !g.recording || ts.in_handler || (caller >= g.text_start && caller < g.text_end)) return 0;
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    return (uintptr_t)d >= here && (uintptr_t)d - here < (64UL << 20);
}

/* strlen/strnlen of the program's string, which may be on the traced heap: read untraced (its pages open */
/* for the measure only, closed again before the real function runs and its accesses are checked).      */
static size_t measure(const char *s, size_t max)
{
    int mine = enter_untraced();
    size_t n = 0;
    while (n < max && s[n]) n++;
    if (mine) leave_untraced();
    return n;
}

EXPORT char *strcpy(char *d, const char *s)
{
    uintptr_t pc = CALLER;
    if (stack_dest(d, pc)) check_stack_range((uintptr_t)d, measure(s, SIZE_MAX) + 1, 1, pc, "strcpy");
    return REAL_OF(strcpy)(d, s);
}

EXPORT char *strcat(char *d, const char *s)
{
    uintptr_t pc = CALLER;
    if (stack_dest(d, pc)) { /* the bytes appended, as the compiled-in checker says them */
        size_t at = measure(d, SIZE_MAX);
        check_stack_range((uintptr_t)d + at, measure(s, SIZE_MAX) + 1, 1, pc, "strcat");
    }
    return REAL_OF(strcat)(d, s);
}

EXPORT char *strncpy(char *d, const char *s, size_t n)
{
    uintptr_t pc = CALLER;
    if (stack_dest(d, pc) && n) check_stack_range((uintptr_t)d, n, 1, pc, "strncpy");
    return REAL_OF(strncpy)(d, s, n);
}

EXPORT char *strncat(char *d, const char *s, size_t n)
{
    uintptr_t pc = CALLER;
    if (stack_dest(d, pc)) {
        size_t at = measure(d, SIZE_MAX);
        check_stack_range((uintptr_t)d + at, measure(s, n) + 1, 1, pc, "strncat");
    }
    return REAL_OF(strncat)(d, s, n);
}

/* The length the format makes, by libc's own vsnprintf (untraced: its reads of heap strings are the real */
/* call's to check), or -1.                                                                               */
static int formatted(const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    int mine = enter_untraced();
    int k = REAL_OF(vsnprintf)(NULL, 0, fmt, copy);
    if (mine) leave_untraced();
    va_end(copy);
    return k;
}

EXPORT int vsprintf(char *d, const char *fmt, va_list ap)
{
    uintptr_t pc = CALLER;
    if (stack_dest(d, pc)) {
        int k = formatted(fmt, ap);
        if (k >= 0) check_stack_range((uintptr_t)d, (size_t)k + 1, 1, pc, "vsprintf");
    }
    return REAL_OF(vsprintf)(d, fmt, ap);
}

EXPORT int sprintf(char *d, const char *fmt, ...)
{
    uintptr_t pc = CALLER;
    va_list ap;
    va_start(ap, fmt);
    if (stack_dest(d, pc)) {
        int k = formatted(fmt, ap);
        if (k >= 0) check_stack_range((uintptr_t)d, (size_t)k + 1, 1, pc, "sprintf");
    }
    int r = REAL_OF(vsprintf)(d, fmt, ap);
    va_end(ap);
    return r;
}

EXPORT int vsnprintf(char *d, size_t n, const char *fmt, va_list ap)
{
    uintptr_t pc = CALLER;
    if (n && stack_dest(d, pc)) {
        int k = formatted(fmt, ap);
        if (k >= 0) check_stack_range((uintptr_t)d, (size_t)k + 1 < n ? (size_t)k + 1 : n, 1, pc, "vsnprintf");
    }
    return REAL_OF(vsnprintf)(d, n, fmt, ap);
}

EXPORT int snprintf(char *d, size_t n, const char *fmt, ...)
{
    uintptr_t pc = CALLER;
    va_list ap;
    va_start(ap, fmt);
    if (n && stack_dest(d, pc)) {
        int k = formatted(fmt, ap);
        if (k >= 0) check_stack_range((uintptr_t)d, (size_t)k + 1 < n ? (size_t)k + 1 : n, 1, pc, "snprintf");
    }
    int r = REAL_OF(vsnprintf)(d, n, fmt, ap);
    va_end(ap);
    return r;
}
