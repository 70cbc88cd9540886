/*
 * check_input.c: `memtrace run --check`'s input functions into stack variables and the executable's globals
 * (docs/check.md, "Stack variables"), for a binary nobody rebuilt. What libc's input functions write into
 * the heap faults and is checked there (check_run.c); a stack buffer is not traced, and a global's writes by
 * libc's copy loops are checked one instruction at a time from wherever libc's cursor is, so an overflow of
 * either went unseen or was said at a libc address. The agent wraps gets, fgets, fgets_unlocked, fgetws,
 * fgetws_unlocked, getline, getdelim, the scanf family (scanf, fscanf, sscanf, their v-forms, their __isoc99_
 * names, which <stdio.h> calls, and __isoc23_ ones, glibc 2.38's) and the wide one (wscanf, fwscanf, swscanf,
 * the same forms) and, after the call, checks what it wrote, as the compiled-in checker's check_io.c does:
 * the line and its terminator (fgets's within its size), each assigned %s and %[...]'s string and terminator,
 * %Nc's N characters, wide ones for %ls %lc (check/check_scan.h walks the format, a wide one by its ASCII
 * copy). The _FORTIFY_SOURCE forms __fgets_chk, __fgets_unlocked_chk, __fgetws_chk, __fgetws_unlocked_chk,
 * __gets_chk and __read_chk run the plain function, are checked as it is, and then give glibc's own verdict
 * (__chk_fail, "*** buffer overflow detected ***") where it would have given it: glibc's _chk function stops
 * at the size gcc knew, so the overflow it refuses would otherwise never be written nor named (the plain
 * read's writes are checked by its system call, check_run.c). A range on the calling thread's stack is checked against its
 * frame's DWARF variable (check_locals.c), one in the executable's globals against its symbol (check_globals.c,
 * with MEMTRACE_CHECK=globals), and reported as memcpy's ranges are:
 *   memtrace: stack overflow: <stack:word@scan_word>+8 (a variable of 8 bytes, declared at line 26 of
 *   scan_word) written 9 bytes by scanf, 0 bytes past its end, at run_input+4709, thread 8104
 * While the call runs, libc's faults on the globals are not reported (the range after it is), so the report
 * names the function and the program's line rather than a libc address.
 *
 * gets and __gets_chk read the line into the agent's memory first and check its range before storing it, so
 * their report comes with the program's memory past the buffer untouched (the real __gets_chk stops there).
 * sscanf and swscanf (v-forms, ISO names) are run aside into the agent's memory first, untraced, and their
 * ranges on the stack and in the globals checked before the real call stores (check_scan.h, mc_scan_before).
 * scanf's and wscanf's stream forms make their one real call, untraced, into the agent's slots (%s as glibc's %ms,
 * its malloc served by an arena: ts.scan_arena, wrappers.c), and each range is checked (stack variable, global,
 * heap block: check_block) before it is copied (check_scan.h, mc_fscan_run), but for what that cannot express.
 * What it gets wrong: the others' check is made after the call, as
 * AddressSanitizer's interceptors make it, so the
 * bytes past the buffer are written before the report (the first report stops the program before the
 * function returns into a smashed frame); the heap is left to its faults (said at libc's store, without the
 * function's name); a _chk call whose range the check finds inside its object (a struct member: gcc's size is
 * the member's) dies of glibc's verdict after the whole line was read, where glibc stops at the member's end;
 * a positional format (%1$s) is not walked; stack variables only in frames with a frame pointer and DWARF
 * (-O0 -g), as check_locals.c says, so the _chk forms (which gcc calls at -O1 and up) only for globals.
 */
#include <stdio.h>
#include <wchar.h>

#include "agent.h"
#include "check/check.h"
#include "check/check_scan.h"

#define CALLER ((uintptr_t)__builtin_return_address(0))

char *gets(char *s); /* gone from C11's <stdio.h>, not from glibc nor from old programs */

ssize_t __getdelim(char **line, size_t *n, int delim, FILE *f);

static struct {
    char *(*gets)(char *);
    char *(*fgets)(char *, int, FILE *);
    wchar_t *(*fgetws)(wchar_t *, int, FILE *);
    ssize_t (*getdelim)(char **, size_t *, int, FILE *);
    ssize_t (*read)(int, void *, size_t);
    void (*chk_fail)(void);
    /* by the name the program called: plain (GNU %a), __isoc99_, __isoc23_ (else __isoc99_'s, or plain wide) */
    int (*vfscanf[3])(FILE *, const char *, va_list);
    int (*vsscanf[3])(const char *, const char *, va_list);
    int (*vfwscanf[3])(FILE *, const wchar_t *, va_list);
    int (*vswscanf[3])(const wchar_t *, const wchar_t *, va_list);
} rl;

static void *next(const char *pre, const char *name, void *otherwise)
{
    char full[40];
    snprintf(full, sizeof full, "%s%s", pre, name);
    void *f = dlsym(RTLD_NEXT, full);
    return f ? f : otherwise;
}

/* At the agent's start, as check_locals_resolve: no dlsym later, inside a handler. */
void check_input_resolve(void)
{
    rl.gets = (typeof(rl.gets))dlsym(RTLD_NEXT, "gets");
    rl.fgets = (typeof(rl.fgets))dlsym(RTLD_NEXT, "fgets");
    rl.fgetws = (typeof(rl.fgetws))dlsym(RTLD_NEXT, "fgetws");
    rl.getdelim = (typeof(rl.getdelim))dlsym(RTLD_NEXT, "getdelim");
    rl.read = (typeof(rl.read))dlsym(RTLD_NEXT, "read");
    rl.chk_fail = (typeof(rl.chk_fail))dlsym(RTLD_NEXT, "__chk_fail");
    static const char *const pre[3] = {"", "__isoc99_", "__isoc23_"};
    for (int i = 0; i < 3; i++) {
        rl.vfscanf[i] = (typeof(rl.vfscanf[0]))next(pre[i], "vfscanf", i ? (void *)rl.vfscanf[i - 1] : NULL);
        rl.vsscanf[i] = (typeof(rl.vsscanf[0]))next(pre[i], "vsscanf", i ? (void *)rl.vsscanf[i - 1] : NULL);
        rl.vfwscanf[i] = (typeof(rl.vfwscanf[0]))next(pre[i], "vfwscanf", i ? (void *)rl.vfwscanf[0] : NULL);
        rl.vswscanf[i] = (typeof(rl.vswscanf[0]))next(pre[i], "vswscanf", i ? (void *)rl.vswscanf[0] : NULL);
    }
}

/* a call of the program's, in a checked run: the agent's own calls and those inside its handlers pass through */
static int wanted(uintptr_t caller)
{
    return chk.on && g.recording && !ts.in_handler && !(caller >= g.text_start && caller < g.text_end);
}

/* The ranges a call wrote, gathered while its strings are measured untraced (they may be in traced globals or */
/* on the heap), checked once the pages are closed again.                                                       */
static __thread struct { uintptr_t p; size_t n; } got[16] __attribute__((tls_model("initial-exec")));
static __thread int ngot __attribute__((tls_model("initial-exec")));

static void gather(const void *p, size_t n, const void *pc, const char *fn)
{
    if (n && ngot < 16) got[ngot++] = (typeof(got[0])){(uintptr_t)p, n};
}

/* each range against the global it starts in, else the stack variable (a heap range was checked by its faults) */
static void check_gathered(uintptr_t pc, const char *fn)
{
    for (int i = 0; i < ngot; i++)
        if (!check_global_range(got[i].p, got[i].n, 1, pc, fn)) check_stack_range(got[i].p, got[i].n, 1, pc, fn);
    ngot = 0;
}

/* after a line-reading call that returned r: its n bytes at s, checked; returns r */
static void *line_read(void *r, const void *s, size_t n, uintptr_t pc, const char *fn)
{
    if (r) {
        gather(s, n, NULL, NULL);
        check_gathered(pc, fn);
    }
    return r;
}

/* the bytes gets, fgets, fgetws wrote: the line and its terminator, within n characters of size w (n 0: none) */
static size_t line_bytes(const void *s, size_t n, size_t w)
{
    int mine = enter_untraced();
    size_t len = 0;
    if (w == 1) while ((!n || len + 1 < n) && ((const char *)s)[len]) len++;
    else while ((!n || len + 1 < n) && ((const wchar_t *)s)[len]) len++;
    if (mine) leave_untraced();
    return (len + 1) * w;
}

/* glibc's verdict on a _chk call that wrote more than the size gcc knew (dl bytes) and was not reported */
static void fortify(size_t wrote, size_t dl)
{
    if (wrote > dl && rl.chk_fail) rl.chk_fail();
}

/* the agent's own pages for a long line (mc_read_line): outside the program's heap and untraced */
static void *line_pages(void *old, size_t old_size, size_t size)
{
    if (!size) { mt_unmap_pages(old, old_size); return NULL; }
    return mt_map_pages(size);
}

/* gets and __gets_chk: the line is read into the agent's memory first and its range checked (stack variable,
 * global, heap block: check_block) before a byte of it is stored, so an overflow is said with the program's
 * memory past the buffer as it was; then __gets_chk's verdict on a line over dl, before the copy, as glibc's
 * stops at dl. Stored when nothing stopped the program (continue mode: the whole line, as gets would). */
static char *gets_at(char *s, uintptr_t pc, size_t dl)
{
    if (!wanted(pc)) return rl.gets(s);
    char small[1024];
    struct mc_line l = {small, 0, sizeof small, 0};
    ts.in_input++;
    int got = mc_read_line(stdin, &l, line_pages);
    ts.in_input--;
    if (got) {
        check_block(s, NULL, l.len + 1, pc, "gets");
        fortify(l.len + 1, dl);
        int mine = enter_untraced(); /* s may be a traced global or heap block: its range is checked above */
        for (size_t i = 0; i <= l.len; i++) s[i] = l.p[i];
        if (mine) leave_untraced();
    }
    mc_line_done(&l, line_pages);
    return got ? s : NULL;
}

static char *fgets_at(char *s, int n, FILE *f, uintptr_t pc, size_t dl)
{
    if (!wanted(pc)) return rl.fgets(s, n, f);
    ts.in_input++;
    char *r = rl.fgets(s, n, f);
    ts.in_input--;
    size_t k = r ? line_bytes(s, (size_t)n, 1) : 0;
    line_read(r, s, k, pc, "fgets");
    fortify(k, dl);
    return r;
}

static wchar_t *fgetws_at(wchar_t *s, int n, FILE *f, uintptr_t pc, size_t dl)
{
    if (!wanted(pc)) return rl.fgetws(s, n, f);
    ts.in_input++;
    wchar_t *r = rl.fgetws(s, n, f);
    ts.in_input--;
    size_t k = r ? line_bytes(s, (size_t)n, sizeof(wchar_t)) : 0;
    line_read(r, s, k, pc, "fgetws");
    fortify(k, dl);
    return r;
}

char *__gets_chk(char *s, size_t dl);
char *__fgets_chk(char *s, size_t dl, int n, FILE *f);
char *__fgets_unlocked_chk(char *s, size_t dl, int n, FILE *f);
wchar_t *__fgetws_chk(wchar_t *s, size_t dl, int n, FILE *f);
wchar_t *__fgetws_unlocked_chk(wchar_t *s, size_t dl, int n, FILE *f);
ssize_t __read_chk(int fd, void *b, size_t n, size_t dl);

EXPORT char *gets(char *s) { return gets_at(s, CALLER, SIZE_MAX); }
EXPORT char *__gets_chk(char *s, size_t dl) { return gets_at(s, CALLER, dl); }
EXPORT char *fgets(char *s, int n, FILE *f) { return fgets_at(s, n, f, CALLER, SIZE_MAX); }
EXPORT char *(fgets_unlocked)(char *s, int n, FILE *f) { return fgets_at(s, n, f, CALLER, SIZE_MAX); }
/* glibc's _chk forms read nothing and return NULL given a size of 1 (the plain ones an empty string) or a dl of 0 */
EXPORT char *__fgets_chk(char *s, size_t dl, int n, FILE *f)
{
    return n <= 1 || !dl ? NULL : fgets_at(s, n, f, CALLER, dl);
}
EXPORT char *__fgets_unlocked_chk(char *s, size_t dl, int n, FILE *f)
{
    return n <= 1 || !dl ? NULL : fgets_at(s, n, f, CALLER, dl);
}
EXPORT wchar_t *fgetws(wchar_t *s, int n, FILE *f) { return fgetws_at(s, n, f, CALLER, SIZE_MAX); }
EXPORT wchar_t *(fgetws_unlocked)(wchar_t *s, int n, FILE *f) { return fgetws_at(s, n, f, CALLER, SIZE_MAX); }
/* dl counts wide characters */
EXPORT wchar_t *__fgetws_chk(wchar_t *s, size_t dl, int n, FILE *f)
{
    if (n <= 1 || !dl) return NULL;
    return fgetws_at(s, n, f, CALLER, dl > SIZE_MAX / sizeof(wchar_t) ? SIZE_MAX : dl * sizeof(wchar_t));
}
EXPORT wchar_t *__fgetws_unlocked_chk(wchar_t *s, size_t dl, int n, FILE *f)
{
    if (n <= 1 || !dl) return NULL;
    return fgetws_at(s, n, f, CALLER, dl > SIZE_MAX / sizeof(wchar_t) ? SIZE_MAX : dl * sizeof(wchar_t));
}

/* glibc's refuses n over dl before reading; here, when the program asked for a check, the read is made and its */
/* bytes checked as one write of read at the program's call (not by its system call, check_run.c, which would */
/* name libc's), then refused as glibc would                                                                   */
EXPORT ssize_t __read_chk(int fd, void *b, size_t n, size_t dl)
{
    uintptr_t pc = CALLER;
    if (n <= dl || !wanted(pc)) {
        fortify(n, dl);
        return rl.read(fd, b, n);
    }
    ts.in_input++;
    ssize_t r = rl.read(fd, b, n);
    ts.in_input--;
    line_read(r > 0 ? b : NULL, b, r > 0 ? (size_t)r : 0, pc, "read");
    fortify(n, dl);
    return r;
}

/* getline and getdelim: the line and its terminator at *line (a *n larger than the buffer lets them overrun it) */
static ssize_t getdelim_at(char **line, size_t *n, int delim, FILE *f, uintptr_t pc, const char *fn)
{
    if (!wanted(pc)) return rl.getdelim(line, n, delim, f);
    ts.in_input++;
    ssize_t r = rl.getdelim(line, n, delim, f);
    ts.in_input--;
    if (r < 0) return r;
    int mine = enter_untraced();   /* line may point into the heap */
    char *at = *line;
    if (mine) leave_untraced();
    line_read(at, at, (size_t)r + 1, pc, fn);
    return r;
}

EXPORT ssize_t getline(char **line, size_t *n, FILE *f) { return getdelim_at(line, n, '\n', f, CALLER, "getline"); }
EXPORT ssize_t getdelim(char **line, size_t *n, int d, FILE *f) { return getdelim_at(line, n, d, f, CALLER, "getdelim"); }
/* what <stdio.h>'s inline getline calls (gcc -O1 and up): named getline, the program's call */
EXPORT ssize_t __getdelim(char **line, size_t *n, int d, FILE *f) { return getdelim_at(line, n, d, f, CALLER, "getline"); }

/* sscanf and swscanf: run aside into the agent's memory, untraced (the input may be in traced globals or the
 * heap, read again by the real call), and each destination on the stack or in the globals checked before the real
 * call stores (check_scan.h); a heap destination is checked by the real call's faults, before each store. Returns
 * 0 when the format is not run aside: the check is then made after the call. */
static int aside(mc_vsscanf v, mc_vswscanf wv, const void *s, const void *fmt, int gnu, va_list ap, uintptr_t pc,
                 const char *fn)
{
    if (!s || !fmt) return 0;
    char scratch[2048] __attribute__((aligned(16)));
    int mine = enter_untraced();
    ts.in_input++;
    int done = mc_scan_before(v, wv, s, fmt, gnu, ap, scratch, sizeof scratch, line_pages, NULL, fn, gather);
    ts.in_input--;
    if (mine) leave_untraced();
    if (done) check_gathered(pc, fn);
    if (done) ts.in_input++;   /* the real call's faults on the globals: checked above (stored() ends it) */
    return done;
}

static int stored(int r)
{
    ts.in_input--;
    return r;
}

/* fscanf and fwscanf: the one real call into the agent's slots, untraced (check_scan.h), then each range checked
 * (stack variable, global, heap block: check_block) before it is copied. Returns 0 when the call was not made:
 * the caller makes it and checks after it. */
static int streamed(FILE *in, mc_vfscanf v, mc_vfwscanf wv, const void *fmt, int gnu, va_list ap, uintptr_t pc,
                    const char *fn, int *r)
{
    struct mc_fscan st;
    int mine = enter_untraced();
    ts.in_input++;
    int done = mc_fscan_run(&st, v, wv, in, fmt, gnu, ap, line_pages, &ts.scan_arena);
    ts.in_input--;
    if (mine) leave_untraced();
    if (!done) return 0;
    for (int k = 0; k < st.args; k++) check_block(st.dest[k], NULL, mc_fscan_range(&st, k), pc, fn);
    mine = enter_untraced();   /* the destinations may be traced globals or heap blocks: checked above */
    mc_fscan_store(&st);
    if (mine) leave_untraced();
    errno = st.err;
    *r = st.r;
    return 1;
}

static int scan_at(FILE *in, const char *s, int form, const char *fmt, va_list ap, uintptr_t pc, const char *fn)
{
    if (!wanted(pc)) return in ? rl.vfscanf[form](in, fmt, ap) : rl.vsscanf[form](s, fmt, ap);
    int r;
    if (in && streamed(in, rl.vfscanf[form], NULL, fmt, form == 0, ap, pc, fn, &r)) return r;
    if (!in && aside(rl.vsscanf[form], NULL, s, fmt, form == 0, ap, pc, fn)) return stored(rl.vsscanf[form](s, fmt, ap));
    va_list walk;
    va_copy(walk, ap);
    ts.in_input++;
    r = in ? rl.vfscanf[form](in, fmt, ap) : rl.vsscanf[form](s, fmt, ap);
    ts.in_input--;
    if (r > 0) {
        int mine = enter_untraced();
        mc_scanned(fmt, walk, r, NULL, fn, gather);
        if (mine) leave_untraced();
        check_gathered(pc, fn);
    }
    va_end(walk);
    return r;
}

static int wscan_at(FILE *in, const wchar_t *s, int form, const wchar_t *fmt, va_list ap, uintptr_t pc, const char *fn)
{
    if (!wanted(pc)) return in ? rl.vfwscanf[form](in, fmt, ap) : rl.vswscanf[form](s, fmt, ap);
    int r;
    if (in && streamed(in, NULL, rl.vfwscanf[form], fmt, form == 0, ap, pc, fn, &r)) return r;
    if (!in && aside(NULL, rl.vswscanf[form], s, fmt, form == 0, ap, pc, fn)) return stored(rl.vswscanf[form](s, fmt, ap));
    va_list walk;
    va_copy(walk, ap);
    ts.in_input++;
    r = in ? rl.vfwscanf[form](in, fmt, ap) : rl.vswscanf[form](s, fmt, ap);
    ts.in_input--;
    if (r > 0 && fmt) {
        int mine = enter_untraced();
        mc_wscanned(fmt, walk, r, NULL, fn, gather);
        if (mine) leave_untraced();
        check_gathered(pc, fn);
    }
    va_end(walk);
    return r;
}

/* each name in each form (check_scan.h) */
MC_SCANF_ENTRY_POINTS(EXPORT, scan_at, "", gnu, 0)
MC_SCANF_ENTRY_POINTS(EXPORT, scan_at, "__isoc99_", c99, 1)
MC_SCANF_ENTRY_POINTS(EXPORT, scan_at, "__isoc23_", c23, 2)
MC_WSCANF_ENTRY_POINTS(EXPORT, wscan_at, "", wgnu, 0)
MC_WSCANF_ENTRY_POINTS(EXPORT, wscan_at, "__isoc99_", wc99, 1)
MC_WSCANF_ENTRY_POINTS(EXPORT, wscan_at, "__isoc23_", wc23, 2)
