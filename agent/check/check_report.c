/*
 * check_report.c: names and reports of `memtrace cc --check`.
 *
 * One line for people on stderr per error, e.g.
 *   memtrace: heap overflow: <malloc0002@bad+26>+50 (a block of 50 bytes, allocated at x.c:28) written 1 byte,
 *   0 bytes past its end, at x.c:39 (bad+115), thread 8104
 * and, with MEMTRACE_CHECK_JSON=FILE, the same facts as one JSON object a line (docs/check.md has both
 * grammars). Names are memtrace's (docs/naming.md): heap blocks <malloc0002@bad+26> by the process's
 * allocation counter and the allocating call's return address as function+offset; globals by name; stack
 * variables <stack:buf@bad> from the frame description gcc stores at the frame's base. Code is named by the
 * call-site tables that `memtrace cc --check` puts in every object it builds (function, offset of the
 * return address, file:line from the assembly's .loc), else by the function its module's .symtab says holds it
 * (check_names.c: a binary nobody rebuilt, static functions included) with the executable's DWARF line
 * (check_line_of), else by dladdr, else module+offset: all independent of where ASLR put things, so two runs'
 * reports diff.
 * C++ symbols are spelled as the source spells them (Foo::bar(int)+115) by the system's c++filt
 * (check_demangle.c), unless MEMTRACE_CHECK has `mangled`.
 *
 * Options (environment, read once at start): MEMTRACE_CHECK=continue[,summary][,noleaks][,mangled][,globals][,noreturn] (report each distinct
 * error once, by kind and code site, and go on; the summary is then printed at exit when the run reported
 * something: a run that found nothing prints nothing the program did not, as ASan's halt_on_error=0),
 * MEMTRACE_CHECK=summary (the summary always, also of a clean run),
 * MEMTRACE_CHECK_EXITCODE=N (default 1; leaks alone exit 23, as LeakSanitizer), MEMTRACE_CHECK_QUARANTINE=BYTES,
 * MEMTRACE_CHECK_JSON=FILE (created, never overwritten: an existing file is refused with a line),
 * MEMTRACE_CHECK_SARIF=FILE (the same, as a SARIF 2.1.0 log: check_sarif.c).
 *
 * A site in inlined code (gcc -O2) is followed by its frames, one per inlined function, innermost first, each
 * "(inlined)", then the function the code lies in (docs/check.md, "Inlined frames"):
 *       #0 x.c:14 (main+405) in set (inlined)
 *       #1 x.c:34 (main+405) in main
 * and the block's allocating and freeing calls likewise, under "  allocated at:" and "  freed at:". A block the
 * C++ library allocated or freed for the program is said by the program's call (check_callers.c found it, or its
 * inlined frames give it) and the library function it went through (docs/check.md, "Sites in the user's code"):
 *   (a block of 64 bytes, allocated at cases.cc:50, through std::vector<int, std::allocator<int> >::vector(...))
 *
 * What it gets wrong: one frame of stack per site (the calling one, and the calls inlined there); a stack object is found only in a frame
 * gcc laid out (checked code); an overflow that lands inside another valid object is seen only when a loop
 * check's object-level test finds it (mc_report_into; check_shadow.c's mc_escapes) or an indexed access 96 bytes
 * or more from its base is looked up (__memtrace_check_index), never for other single accesses.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "check.h"
#include "mt_common.h"
#include "check_inline.h"

/* the runtime's own messages are formatted by libc, not by the checked wrappers (check_format.c) */
int mc_snprintf(char *d, size_t n, const char *fmt, ...);
int mc_vsnprintf(char *d, size_t n, const char *fmt, va_list ap);
#define snprintf mc_snprintf
#define vsnprintf mc_vsnprintf

int mc_continue, mc_leaks_on = 1;
static int summary_on, exit_code = 1, errors;
static char json_path[4096];
void mc_set_quarantine(size_t bytes);
const char *mc_family_name(int f);

/* ---- the call-site tables of checked objects ---- */

struct site { const void *ret, *func, *end; const char *name, *loc; };
struct table {
    uint32_t version, nsites, checks, kept, merged, hoisted, ranges, loops;
    struct site sites[];
};
#define MAX_TABLES 8192
static const struct table *tables[MAX_TABLES];
static int ntables;
static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;

MC_EXPORT void __memtrace_check_sites(const struct table *t)
{
    if (t->version != 1) return;
    pthread_mutex_lock(&report_lock);
    if (ntables < MAX_TABLES) tables[ntables++] = t;
    pthread_mutex_unlock(&report_lock);
}

static const struct site *site_of(const void *pc)
{
    for (int i = 0; i < ntables; i++)
        for (uint32_t j = 0; j < tables[i]->nsites; j++)
            if (tables[i]->sites[j].ret == pc) return &tables[i]->sites[j];
    return NULL;
}

/* The function holding a code address by its module's .symtab, its start into *beg (check_names.c; weak: */
/* the fault-mode agent links it too, a test's runtime may not).                                       */
__attribute__((weak)) const char *mc_code_function(uintptr_t pc, uintptr_t *beg);
/* "file:line" of an address of the executable, by its DWARF line table (check_stackvars.c, check_locals.c) */
__attribute__((weak)) const char *check_line_of(uintptr_t pc);
#define LINE_MAX_TEXT 512

/* code: "bad+115" and, when known, line "x.c:39". The call-site table names both; code no table covers is named
 * function+offset by its module's .symtab, else by an exported symbol (dladdr), else module+offset; its line,
 * when lbuf is given (LINE_MAX_TEXT bytes, which *line then points into), is the executable's DWARF line
 * table's: at pc, or when ret (pc a return address) at the call before it, as ASan and memcheck name a caller. */
static void name_code(const void *pc, int ret, char *code, size_t n, const char **line, char *lbuf)
{
    *line = NULL;
    const struct site *s = site_of(pc);
    if (s) {
        snprintf(code, n, "%s+%ld", mc_spell(s->name), (long)((const char *)pc - (const char *)s->func));
        *line = s->loc;
        return;
    }
    /* no call returns there: the function whose extent holds it (a frame's own address) */
    for (int i = 0; i < ntables; i++)
        for (uint32_t j = 0; j < tables[i]->nsites; j++) {
            const struct site *c = &tables[i]->sites[j];
            if (c->func <= pc && pc < c->end) {
                snprintf(code, n, "%s+%ld", mc_spell(c->name), (long)((const char *)pc - (const char *)c->func));
                return;
            }
        }
    if (lbuf && check_line_of && pc) {
        const char *l = check_line_of((uintptr_t)pc - (ret ? 1 : 0));
        if (l) { snprintf(lbuf, LINE_MAX_TEXT, "%s", l); *line = lbuf; }
    }
    uintptr_t beg = 0;
    const char *fn = mc_code_function ? mc_code_function((uintptr_t)pc, &beg) : NULL;
    if (fn) {
        snprintf(code, n, "%s+%ld", mc_spell(fn), (long)((uintptr_t)pc - beg));
        return;
    }
    Dl_info info;
    if (pc && dladdr(pc, &info)) {
        if (info.dli_sname) {
            snprintf(code, n, "%s+%ld", mc_spell(info.dli_sname), (long)((const char *)pc - (const char *)info.dli_saddr));
            return;
        }
        const char *base = info.dli_fname ? strrchr(info.dli_fname, '/') : NULL;
        snprintf(code, n, "%s+%ld", base ? base + 1 : info.dli_fname ? info.dli_fname : "?",
                 (long)((const char *)pc - (const char *)info.dli_fbase));
        return;
    }
    snprintf(code, n, "%p", pc);
}

/* "x.c:28" when the line is known, else "bad+26" */
static void where(const void *pc, char *out, size_t n)
{
    char code[1024], lbuf[LINE_MAX_TEXT];
    const char *line;
    name_code(pc, 1, code, sizeof code, &line, lbuf);
    snprintf(out, n, "%s", line ? line : code);
}

/* ---- the C++ library's allocation plumbing (docs/check.md, "Sites in the user's code") ---- */

/* Whether a function's name, as its symbol spells it or demangled, is the C++ library's: std::, __gnu_cxx::,
 * operator new and delete (docs/stacks.md's rule for naming blocks). */
int mc_plumbing_name(const char *s)
{
    static const char *const prefixes[] = {"_ZNSt", "_ZNKSt", "_ZSt", "_ZN9__gnu_cxx", "_ZNK9__gnu_cxx", "_Znw", "_Zna",
                                           "_Zdl", "_Zda", "std::", "__gnu_cxx::", "operator new", "operator delete"};
    /* compared by hand: libc's strncmp here is the runtime's checked one, and would count in the summary */
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++) {
        const char *a = s, *b = prefixes[i];
        while (*b && *a == *b) a++, b++;
        if (!*b) return 1;
    }
    return 0;
}

/* Verdicts by return address, one word each: the address, its verdict + 1 in bits 48-49, bit 63 set. Written */
/* and read whole, so threads may race on a slot (a lost verdict is looked up again).                         */
static uint64_t plumbing_seen[4096];

int mc_plumbing_known(uintptr_t pc)
{
    uint64_t v = __atomic_load_n(&plumbing_seen[(pc * 0x9E3779B97F4A7C15ull) >> 52], __ATOMIC_RELAXED);
    return (v >> 63) && (v & 0xffffffffffffull) == pc ? (int)((v >> 48) & 3) - 1 : -2;
}

int mc_plumbing(uintptr_t pc)
{
    uint64_t *slot = &plumbing_seen[(pc * 0x9E3779B97F4A7C15ull) >> 52];
    int known = mc_plumbing_known(pc);
    if (known != -2) return known;
    /* the module tables are the report's: a report in progress (or one allocating) leaves the caller as it is */
    if (pthread_mutex_trylock(&report_lock) != 0) return -1;
    const char *fn = mc_code_function ? mc_code_function(pc, NULL) : NULL;
    Dl_info info;
    if (!fn && dladdr((void *)pc, &info)) fn = info.dli_sname;
    int p = fn ? mc_plumbing_name(fn) : -1;
    pthread_mutex_unlock(&report_lock);
    __atomic_store_n(slot, pc | (uint64_t)(p + 1) << 48 | 1ULL << 63, __ATOMIC_RELAXED);
    return p;
}

/* n bytes at `at` into buf, 0 when they could be read (a stray address never faults the report) */
static int read_code(void *buf, uintptr_t at, size_t n)
{
    struct iovec local = {buf, n}, remote = {(void *)at, n};
    return mt_sys6(SYS_process_vm_readv, mt_sys0(SYS_getpid), (long)&local, 1, (long)&remote, 1, 0) != (long)n;
}

/* The function the call before return address pc went to, when that is the C++ library's plumbing but not
 * operator new or delete themselves: a direct call (e8 rel32) to a function's start, or to a PLT stub (jmp
 * *GOT, after endbr64 and bnd) whose slot holds one. Its name (demangled) into out; 0 when there is none. */
static int through(const void *pc, char *out, size_t n)
{
    uint8_t call[5], stub[11];
    if (!pc || read_code(call, (uintptr_t)pc - 5, 5) || call[0] != 0xe8) return 0;
    int32_t rel = (int32_t)((uint32_t)call[1] | (uint32_t)call[2] << 8 | (uint32_t)call[3] << 16 | (uint32_t)call[4] << 24);
    uintptr_t target = (uintptr_t)pc + rel, beg = 0;
    const char *fn = mc_code_function ? mc_code_function(target, &beg) : NULL;
    if (!fn || beg != target) {
        fn = NULL;
        if (read_code(stub, target, sizeof stub)) return 0;
        int k = stub[0] == 0xf3 && stub[1] == 0x0f && stub[2] == 0x1e && stub[3] == 0xfa ? 4 : 0;   /* endbr64 */
        if (stub[k] == 0xf2) k++;
        if (stub[k] != 0xff || stub[k + 1] != 0x25) return 0;
        rel = (int32_t)((uint32_t)stub[k + 2] | (uint32_t)stub[k + 3] << 8 | (uint32_t)stub[k + 4] << 16 | (uint32_t)stub[k + 5] << 24);
        uint64_t slot;
        if (read_code(&slot, target + k + 6 + rel, 8)) return 0;
        Dl_info info;
        if (mc_code_function) fn = mc_code_function((uintptr_t)slot, &beg);
        if (fn && beg != slot) fn = NULL;
        if (!fn && dladdr((void *)(uintptr_t)slot, &info) && info.dli_sname && (uintptr_t)info.dli_saddr == slot) fn = info.dli_sname;
    }
    /* operator new and delete themselves are the allocator, not a way through the library */
    if (!fn || !mc_plumbing_name(fn) || (fn[0] == '_' && fn[1] == 'Z' && (fn[2] == 'n' || fn[2] == 'd'))) return 0;
    snprintf(out, n, "%s", mc_spell_function(fn));
    return 1;
}

/* ---- globals gcc registered ---- */

#define MAX_GLOBALS 65536
static const struct asan_global *globals[MAX_GLOBALS];
static int nglobals;

void mc_note_global(const void *g)
{
    if (nglobals < MAX_GLOBALS) globals[nglobals++] = g;
}

void mc_forget_globals(const void *g, size_t n)
{
    const struct asan_global *first = g, *end = first + n;
    int k = 0;
    for (int i = 0; i < nglobals; i++)
        if (globals[i] < first || globals[i] >= end) globals[k++] = globals[i];
    nglobals = k;
}

/* ---- output ---- */

struct out { char *buf; size_t n, len; };
__attribute__((format(printf, 2, 3))) static void put(struct out *o, const char *fmt, ...)
{
    if (o->len >= o->n) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(o->buf + o->len, o->n - o->len, fmt, ap);
    va_end(ap);
    if (k > 0) o->len = o->len + (size_t)k < o->n ? o->len + (size_t)k : o->n - 1;
}

/* a JSON string: the names memtrace makes need only quotes and backslashes escaped, control bytes as \u */
static void put_json(struct out *o, const char *s)
{
    if (!s) { put(o, "null"); return; }
    put(o, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') put(o, "\\%c", c);
        else if (c < 0x20) put(o, "\\u%04x", c);
        else put(o, "%c", c);
    }
    put(o, "\"");
}

/* 0 when all n bytes were written, else -1 with errno set (a short write past a full disk: ENOSPC) */
static int write_all(int fd, const char *s, size_t n)
{
    while (n) {
        ssize_t k = write(fd, s, n);
        if (k <= 0) {
            if (k == 0) errno = ENOSPC;
            return -1;
        }
        s += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Where reports go: standard error, or the copy of it kept when the program closed its stderr stream
 * (mc_keep_stderr): coreutils' close_stdout, run by atexit before the leak check, closes descriptor 2, and
 * the leak report (status 23) would be lost without a word. */
static volatile int report_fd = 2;
/* the kept copy's file: a program may put a file of its own on that number later (dup2), and a report must
 * never go into it */
static dev_t report_dev;
static ino_t report_ino;

/* The descriptor a report is written on now: 2, or the kept copy while it is still the file kept; -1 when the
 * program took the number (the report is then lost, never written into the program's file). */
static int report_out(void)
{
    if (report_fd == 2) return 2;
    struct stat s;
    return fstat(report_fd, &s) == 0 && s.st_dev == report_dev && s.st_ino == report_ino ? report_fd : -1;
}

/* A copy of descriptor 2 at the highest free number below min(RLIMIT_NOFILE, 1024) (out of the way of a
 * program that opens files lowest-first, as rt_fd.c keeps the trace's), close-on-exec; taken only when the
 * program is about to close its stderr, so that a program that never does keeps every number it had. */
static void mc_keep_stderr(void)
{
    if (report_fd != 2 || fcntl(2, F_GETFD) < 0) return;
    int fd = mt_dup_high(2);
    struct stat s;
    if (fd < 0) return;
    if (fstat(fd, &s) != 0) {
        close(fd);
        return;
    }
    report_dev = s.st_dev;
    report_ino = s.st_ino;
    report_fd = fd;
}

/* The program's fclose(stderr): the runtime keeps its copy first (above), then libc's fclose runs. */
MC_EXPORT int fclose(FILE *f)
{
    static int (*real_fclose)(FILE *);
    if (!real_fclose) real_fclose = (int (*)(FILE *))dlsym(RTLD_NEXT, "fclose");
    if (f == stderr) mc_keep_stderr();
    return real_fclose(f);
}

/* A report that did not reach its log file (a full disk): said once per log, as one line, so that a user never
 * takes a log cut short for a complete one. */
void mc_log_failed(const char *what, const char *path, int err)
{
    static int said_json, said_sarif;
    int *said = what[0] == 'J' ? &said_json : &said_sarif;
    if (*said) return;
    *said = 1;
    char msg[600];
    int k = snprintf(msg, sizeof msg, "memtrace: check: cannot write the %s log %s (it is incomplete): %s\n", what, path, strerror(err));
    int out = report_out();
    if (out >= 0) write_all(out, msg, (size_t)k < sizeof msg ? (size_t)k : sizeof msg - 1);
}

static void emit(struct out *line, struct out *json)
{
    put(line, "\n");
    fflush(stdout);           /* the program's own output first: a report never hides it */
    int out = report_out();
    if (out >= 0) write_all(out, line->buf, line->len);
    if (json_path[0]) {
        /* opened for each record, so that no descriptor of the program's is taken between them */
        int fd = open(json_path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0) {
            put(json, "}\n");
            if (write_all(fd, json->buf, json->len) != 0) mc_log_failed("JSON", json_path, errno);
            close(fd);
        } else {
            mc_log_failed("JSON", json_path, errno);
        }
    }
}

static void summary(void);
static int leaked;

/* Whether the summary line is printed: always when asked (`summary`); in continue mode under the reports a run
 * printed, never after a clean run, whose stderr stays the program's own (test suites compare it with an empty
 * file; ASan's halt_on_error=0 is as silent) */
static int want_summary(void)
{
    return summary_on || (mc_continue && (errors || leaked));
}

/* A report whose caller cannot go on (gcc's noreturn __asan_report_*): stop as a first error stops, also in
 * continue mode. */
void mc_stop(void)
{
    mc_counts_stopped();
    if (want_summary()) summary();
    fflush(NULL);
    _exit(exit_code);
}

static void finish_error(void)
{
    errors++;
    if (!mc_continue) {
        mc_counts_stopped();
        if (want_summary()) summary();
        fflush(NULL);
        _exit(exit_code);
    }
}

/* continue mode: an error of one kind at one code site is reported once */
static int seen(const char *kind, const void *pc)
{
    static struct { const char *kind; const void *pc; } done[4096];
    static int ndone;
    for (int i = 0; i < ndone; i++)
        if (done[i].pc == pc && strcmp(done[i].kind, kind) == 0) return 1;
    if (ndone < 4096) { done[ndone].kind = kind; done[ndone].pc = pc; ndone++; }
    return 0;
}

/* ---- what a bad address is ---- */

struct object {
    const char *kind;            /* the error's kind: "heap overflow", ... */
    const char *json_kind;
    char name[1280];              /* the object: <malloc0002@bad+26>, g, <stack:buf@bad> */
    char desc[2048];              /* "a block of 50 bytes, allocated at x.c:28" */
    const char *region;          /* heap, global, stack */
    long offset;                 /* of the address from the object's start */
    long distance;               /* past the end (>= 0), before the start (< 0 stored as -n), 0 inside */
    size_t size;
    int known;
    const struct mc_block *block;
    const char *into;            /* the other object an addressable access landed in (mc_report_into), or NULL */
};

static void block_name(const struct mc_block *b, int freed, char *out, size_t n)
{
    char code[1024];
    const char *line;
    name_code(b->alloc_pc, 1, code, sizeof code, &line, NULL);
    static const char *kinds[] = {"malloc", "calloc", "realloc", "malloc", "new"};
    const char *k = b->family == MC_NEW_ARRAY ? "new[]" : kinds[b->fn < 5 ? b->fn : 0];
    if (freed) snprintf(out, n, "<freed:%04u@%s>", b->number, code);
    else snprintf(out, n, "<%s%04u@%s>", k, b->number, code);
}

static void block_where(const void *pc, char *out, size_t n);

static void describe_block(const struct mc_block *b, struct object *o)
{
    char at[1024], fat[1024];
    int freed = b->magic == MC_QUARANTINED;
    block_name(b, freed, o->name, sizeof o->name);
    block_where(b->alloc_pc, at, sizeof at);
    if (freed) {
        block_where(b->free_pc, fat, sizeof fat);
        snprintf(o->desc, sizeof o->desc, "a block of %lu bytes, allocated at %s, freed at %s", (unsigned long)b->size, at, fat);
    } else {
        snprintf(o->desc, sizeof o->desc, "a block of %lu bytes, allocated at %s", (unsigned long)b->size, at);
    }
    o->size = b->size;
    o->region = "heap";
    o->block = b;
    o->known = 1;
}

static int frame_object(uintptr_t g, uintptr_t addr, struct object *o);

/* gcc's frame: 32-byte aligned base, shadow f1 f1 f1 f1, magic, description "N off size len name:line ...", pc */
static int stack_object(uintptr_t addr, struct object *o)
{
    uintptr_t g = addr & ~(uintptr_t)7;
    if (&mc_fake_frame_of && (g = mc_fake_frame_of(addr)) != 0)   /* a fake frame: its base is known */
        return (*(uint64_t *)g == 0x41B58AB3 || *(uint64_t *)g == 0x45E0360E) && frame_object(g, addr, o);
    g = addr & ~(uintptr_t)7;
    for (int i = 0; i < 65536 && g >= 8; i++, g -= 8) {
        uint8_t v = *MC_SHADOW(g);
        if (v >= 0x80 && v != MC_STACK_LEFT && v != MC_STACK_MID && v != MC_STACK_RIGHT && v != MC_STACK_SCOPE) return 0;
        if (v != MC_STACK_LEFT || *MC_SHADOW(g - 8) == MC_STACK_LEFT) continue;
        if (*(uint64_t *)g != 0x41B58AB3) continue;
        return frame_object(g, addr, o);
    }
    return 0;
}

/* The variable of the frame based at g (live: magic 0x41B58AB3; a fake frame retired at its function's
 * return: 0x45E0360E, the rest kept) nearest to addr. */
static int frame_object(uintptr_t g, uintptr_t addr, struct object *o)
{
    const char *d = *(const char **)(g + 8);
    const void *pc = *(const void **)(g + 16);
    char fn[1024];
    const char *line;
    name_code(pc, 1, fn, sizeof fn, &line, NULL);
    char *plus = strrchr(fn, '+');
    if (plus && strcmp(plus, "+0") == 0) *plus = 0;
    long off = (long)(addr - g), best = -1, bestd = 0;
    char bname[128] = "?";
    long bstart = 0, bsize = 0;
    int nvars = (int)strtol(d, (char **)&d, 10);
    for (int k = 0; k < nvars && d; k++) {
        long vo = strtol(d, (char **)&d, 10), vs = strtol(d, (char **)&d, 10), vl = strtol(d, (char **)&d, 10);
        if (*d == ' ') d++;
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)(vl < 127 ? vl : 127), d);
        d += vl;
        long dist = off >= vo + vs ? off - (vo + vs) : off < vo ? vo - off : 0;
        if (best < 0 || dist < bestd || (dist == bestd && off >= vo + vs)) {
            best = k; bestd = dist; bstart = vo; bsize = vs;
            snprintf(bname, sizeof bname, "%s", name);
        }
    }
    if (best < 0) return 0;
    char *colon = strchr(bname, ':');
    const char *decl = colon ? colon + 1 : NULL;
    if (colon) *colon = 0;
    snprintf(o->name, sizeof o->name, "<stack:%s@%s>", bname, fn);
    if (decl) snprintf(o->desc, sizeof o->desc, "a variable of %ld bytes, declared at line %s of %s", bsize, decl, fn);
    else snprintf(o->desc, sizeof o->desc, "a variable of %ld bytes in %s's frame", bsize, fn);
    o->offset = off - bstart;
    o->size = (size_t)bsize;
    o->distance = off >= bstart + bsize ? off - (bstart + bsize) : off < bstart ? -(bstart - off) : 0;
    o->region = "stack";
    o->known = 1;
    return 1;
}

static int global_object(uintptr_t addr, struct object *o)
{
    for (int i = 0; i < nglobals; i++) {
        const struct asan_global *g = globals[i];
        if (addr < g->beg || addr >= g->beg + g->size_with_redzone) continue;
        snprintf(o->name, sizeof o->name, "%s", g->name);
        if (strncmp(g->name, "*.LC", 4) == 0) {
            /* gcc's name of a string literal is its assembler label, which changes with -O: name it by its text */
            const char *t = (const char *)g->beg;
            size_t k = 0, i = 0;
            o->name[k++] = '"';
            for (; i < g->size && t[i] && i < 24 && k + 4 < sizeof o->name; i++)
                o->name[k++] = t[i] >= 0x20 && t[i] < 0x7f && t[i] != '"' && t[i] != '\\' ? t[i] : '?';
            if (i < g->size && t[i] && i == 24) { o->name[k++] = '.'; o->name[k++] = '.'; o->name[k++] = '.'; }
            o->name[k++] = '"';
            o->name[k] = 0;
            snprintf(o->desc, sizeof o->desc, "a string literal of %lu bytes", (unsigned long)g->size);
        } else if (g->location && g->location->file)
            snprintf(o->desc, sizeof o->desc, "a global of %lu bytes, defined at %s:%d", (unsigned long)g->size,
                     g->location->file, g->location->line);
        else
            snprintf(o->desc, sizeof o->desc, "a global of %lu bytes", (unsigned long)g->size);
        o->offset = (long)(addr - g->beg);
        o->size = g->size;
        o->distance = o->offset >= (long)g->size ? o->offset - (long)g->size : 0;
        o->region = "global";
        o->known = 1;
        return 1;
    }
    return 0;
}

/* An address in a global's redzone that is nearer the next global's start than the end of the one it follows:
 * an underflow of the next one (the redzone is both globals' neighbour). */
static int global_underflow(uintptr_t addr, struct object *o)
{
    const struct asan_global *best = NULL;
    for (int i = 0; i < nglobals; i++) {
        const struct asan_global *g = globals[i];
        if (g->beg > addr && (!best || g->beg < best->beg)) best = g;
    }
    if (!best || (o->known && (long)(best->beg - addr) >= o->distance)) return 0;
    if (!global_object(best->beg, o)) return 0;
    o->offset = -(long)(best->beg - addr);
    o->distance = o->offset;
    return 1;
}

/* gcc's alloca layout: a 32-byte left redzone (0xca), the object, a right redzone (0xcb) */
static int alloca_object(uintptr_t addr, struct object *o)
{
    uintptr_t g = addr & ~(uintptr_t)7;
    uint8_t v = *MC_SHADOW(g);
    if (v == MC_ALLOCA_LEFT) {
        for (int i = 0; i < 8 && *MC_SHADOW(g) == MC_ALLOCA_LEFT; i++) g += 8;
    } else {
        for (int i = 0; i < 65536 && *MC_SHADOW(g - 8) != MC_ALLOCA_LEFT; i++) {
            uint8_t s = *MC_SHADOW(g - 8);
            if (s != 0 && s != MC_ALLOCA_RIGHT && s >= 0x80) return 0;
            g -= 8;
        }
        if (*MC_SHADOW(g - 8) != MC_ALLOCA_LEFT) return 0;
    }
    size_t size = 0;
    for (uintptr_t a = g; size < ((size_t)1 << 26); a += 8) {
        uint8_t s = *MC_SHADOW(a);
        if (s == 0) { size += 8; continue; }
        if (s < 0x80) size += s;
        break;
    }
    snprintf(o->name, sizeof o->name, "<stack:alloca>");
    snprintf(o->desc, sizeof o->desc, "an alloca of %lu bytes", (unsigned long)size);
    o->offset = (long)(addr - g);
    o->size = size;
    o->distance = o->offset >= (long)size ? o->offset - (long)size : o->offset < 0 ? o->offset : 0;
    o->region = "stack";
    o->known = 1;
    return 1;
}

static void classify(uintptr_t bad, struct object *o)
{
    memset(o, 0, sizeof *o);
    uint8_t v = *MC_SHADOW(bad);
    if (v < 0x80) v = *MC_SHADOW((bad | 7) + 1);     /* the byte after a partial granule: its neighbour says */
    /* run --check's globals (check_symglobals.c): padding that ends in a granule the next global starts in */
    if (v < 0x80 && global_object(bad, o)) v = MC_GLOBAL_RZ;
    switch (v) {
    case MC_HEAP_LEFT: case MC_HEAP_RIGHT: case MC_HEAP_FREED: {
        int inside = 0;
        struct mc_block *b = mc_block_of(bad, &inside);
        if (!b) break;
        describe_block(b, o);
        uintptr_t start = (uintptr_t)(b + 1);
        o->offset = (long)(bad - start);
        if (b->magic == MC_QUARANTINED && bad >= start && bad < start + (b->size ? b->size : 1)) {
            o->kind = "use after free"; o->json_kind = "use-after-free";
        } else if (bad < start) {
            o->kind = "heap underflow"; o->json_kind = "heap-underflow"; o->distance = -(long)(start - bad);
        } else {
            o->kind = b->magic == MC_QUARANTINED ? "use after free" : "heap overflow";
            o->json_kind = b->magic == MC_QUARANTINED ? "use-after-free" : "heap-overflow";
            o->distance = (long)(bad - start - b->size);
        }
        return;
    }
    case MC_GLOBAL_RZ:
        global_object(bad, o);
        if (global_underflow(bad, o)) { o->kind = "global underflow"; o->json_kind = "global-underflow"; return; }
        if (o->known) { o->kind = "global overflow"; o->json_kind = "global-overflow"; return; }
        break;
    case MC_NULL_PAGE:
        o->kind = "null dereference"; o->json_kind = "null-dereference";
        snprintf(o->name, sizeof o->name, "NULL");
        snprintf(o->desc, sizeof o->desc, "the page at address 0, never mapped");
        o->offset = (long)bad;
        o->size = (size_t)1 << 16;
        o->region = "unknown";
        o->known = 1;
        return;
    case MC_STACK_LEFT: case MC_STACK_MID: case MC_STACK_RIGHT: case MC_STACK_SCOPE: case MC_STACK_RETURNED:
    case MC_ALLOCA_LEFT: case MC_ALLOCA_RIGHT:
        if (v == MC_STACK_RETURNED) { o->kind = "stack use after return"; o->json_kind = "stack-use-after-return"; }
        else if (v == MC_STACK_SCOPE) { o->kind = "stack use after scope"; o->json_kind = "stack-use-after-scope"; }
        else { o->kind = "stack overflow"; o->json_kind = "stack-overflow"; }
        if ((v == MC_ALLOCA_LEFT || v == MC_ALLOCA_RIGHT) && alloca_object(bad, o)) {
            if (o->distance < 0) { o->kind = "stack underflow"; o->json_kind = "stack-underflow"; }
            return;
        }
        if (stack_object(bad, o)) {
            if (o->distance < 0 && v != MC_STACK_SCOPE && v != MC_STACK_RETURNED) { o->kind = "stack underflow"; o->json_kind = "stack-underflow"; }
            return;
        }
        snprintf(o->name, sizeof o->name, "<stack>");
        snprintf(o->desc, sizeof o->desc, "a redzone of a stack frame or alloca");
        o->region = "stack";
        return;
    }
    o->kind = "wild access"; o->json_kind = "wild-access";
    snprintf(o->name, sizeof o->name, "0x%lx", (unsigned long)bad);
    snprintf(o->desc, sizeof o->desc, "memory marked 0x%02x", v);
    o->region = "unknown";
}

static const char *plural(size_t n) { return n == 1 ? "" : "s"; }

/* memtrace run --check --stack-depth N (N > 1): the return addresses above a report's site, which the agent
 * finds on the program's frame-pointer chain and sets around the report (its own thread's), printed one a line
 * under the report as ASan prints its frames: "    #0 stack_loop.c:9 (plain-c-O0+4661) in fill" (the line's
 * own site), then "    #1 stack_loop.c:14 (plain-c-O0+4711) in bad" and on; the same frames go into the JSON
 * record ("frames") and the SARIF result ("stacks").
 * The function's name is the executable's .symtab's when the agent read it (check_function_of, weak: the
 * compiled-in runtime has none; in a rewrite run it reads the .symtab itself, check_names.c, and finds the
 * frames by mc_frames_above); file:line the call-site table's, else the executable's
 * DWARF line table's that memtrace handed the agent (check_line_of, weak too: check_locals.c), for a return
 * address the line of the call (the byte before it; #0 too when the report's site is a wrapper's return
 * address, mc_frame0_return, rather than a faulting instruction). */
/* initial-exec, as every thread variable here: a fault can come in a new thread before its TLS is set up */
__thread const uint64_t *mc_frames __attribute__((tls_model("initial-exec")));
__thread int mc_nframes __attribute__((tls_model("initial-exec")));
__thread int mc_frame0_return __attribute__((tls_model("initial-exec")));
__attribute__((weak)) const char *check_function_of(uintptr_t pc);
/* Inlined frames (docs/check.md, "Inlined frames"): the table of the module that holds pc (built by memtrace
 * from its DWARF: check_inline.h) and the module's load bias, or NULL; the agent's (check_inlines.c: the
 * executable's, handed over behind MEMTRACE_CHECK_FRAMES) or the runtime's (check_inline.c: the section
 * .memtrace_inlines memtrace cc --check put in each linked module). A frame whose address lies in inlined code
 * becomes one frame per inlined function, innermost first, each marked "(inlined)", then the function the
 * code lies in: addr2line -i's chain. mc_stack_depth 1 (--stack-depth 1, MEMTRACE_STACK_DEPTH=1): no frames. */
__attribute__((weak)) const struct mc_inlines *mc_inline_table(uintptr_t pc, uintptr_t *bias);
int mc_stack_depth = 12;
#define MC_MAX_FRAMES 64
/* the frames of the report being made: named once for the line, the JSON and SARIF (under report_lock); the
 * access's, and those of the allocating and freeing calls when inlined code made them */
struct frames {
    int n;
    char code[MC_MAX_FRAMES][512], line[MC_MAX_FRAMES][512], fn[MC_MAX_FRAMES][512];
    int inlined[MC_MAX_FRAMES];
    struct mc_site_ref ref[MC_MAX_FRAMES];
};
static struct frames fr, fr_alloc, fr_free;

static void add_frame(struct frames *f, const char *code, const char *line, const char *fn, int inlined)
{
    if (f->n >= MC_MAX_FRAMES) return;
    int k = f->n++;
    snprintf(f->code[k], sizeof f->code[k], "%s", code);
    snprintf(f->line[k], sizeof f->line[k], "%s", line ? line : "");
    snprintf(f->fn[k], sizeof f->fn[k], "%s", fn ? mc_spell_function(fn) : "");
    f->inlined[k] = inlined;
    f->ref[k] = (struct mc_site_ref){f->code[k], line ? f->line[k] : NULL, f->fn[k][0] ? f->fn[k] : NULL, inlined};
}

/* the function a code address of a checked object lies in, by its call-site table, else (a binary nobody
 * rebuilt) by its module's .symtab */
static const char *site_function(const void *pc)
{
    for (int i = 0; i < ntables; i++)
        for (uint32_t j = 0; j < tables[i]->nsites; j++) {
            const struct site *c = &tables[i]->sites[j];
            if (c->func <= pc && pc < c->end) return c->name;
        }
    return mc_code_function ? mc_code_function((uintptr_t)pc, NULL) : NULL;
}

/* One code address's frames into f: at (a return address when ret, else an instruction) named as the report
 * names code, with its line and function, expanded into its inlined calls when it lies in inlined code.
 * Returns how many calls were inlined there (0: the one frame, added only when always). */
static int add_frames(struct frames *f, uintptr_t at, int ret, int always)
{
    uintptr_t call = ret ? at - 1 : at, bias = 0;
    const char *line, *fn = check_function_of ? check_function_of(call) : site_function((const void *)call);
    char code[512];
    name_code((const void *)at, ret, code, sizeof code, &line, NULL);
    if (!line && check_line_of) line = check_line_of(call);
    const struct mc_inl_call *chain[MC_MAX_FRAMES];
    const struct mc_inlines *t = mc_stack_depth > 1 && mc_inline_table ? mc_inline_table(call, &bias) : NULL;
    int k = t && call >= bias ? mc_inlines_chain(t, call - bias, chain, MC_MAX_FRAMES) : 0;
    if (!k) {
        if (always) add_frame(f, code, line, fn, 0);
        return 0;
    }
    /* the innermost call's line is the line table's; each outer one's is where its inner call was made */
    add_frame(f, code, line, mc_inlines_str(t, chain[0]->name), 1);
    for (int i = 1; i <= k; i++) {
        char where[512];
        const char *file = chain[i - 1]->file != 0xffffffffu ? mc_inlines_str(t, chain[i - 1]->file) : NULL;
        if (file && chain[i - 1]->line) snprintf(where, sizeof where, "%s:%u", file, chain[i - 1]->line);
        add_frame(f, code, file && chain[i - 1]->line ? where : NULL, i < k ? mc_inlines_str(t, chain[i]->name) : fn, i < k);
    }
    return k;
}

/* A block's allocating or freeing call (return address pc) lies in calls of the C++ library's plumbing that
 * gcc inlined into the program's function (std::vector's constructor at -O2): the line of the program's own
 * call into them into lbuf (LINE_MAX_TEXT bytes), the outermost plumbing function into via; 0 otherwise. */
static int inlined_user_line(const void *pc, char *lbuf, char *via, size_t nvia)
{
    uintptr_t call = (uintptr_t)pc - 1, bias = 0;
    const struct mc_inl_call *chain[MC_MAX_FRAMES];
    const struct mc_inlines *t = pc && mc_stack_depth > 1 && mc_inline_table ? mc_inline_table(call, &bias) : NULL;
    int k = t && call >= bias ? mc_inlines_chain(t, call - bias, chain, MC_MAX_FRAMES) : 0;
    if (!k || !mc_plumbing_name(mc_inlines_str(t, chain[0]->name))) return 0;
    for (int i = 1; i <= k; i++) {
        const char *fn = i < k ? mc_inlines_str(t, chain[i]->name)
                               : check_function_of ? check_function_of(call) : site_function((const void *)call);
        if (fn && mc_plumbing_name(fn)) continue;
        const char *file = chain[i - 1]->file != 0xffffffffu ? mc_inlines_str(t, chain[i - 1]->file) : NULL;
        if (!file || !chain[i - 1]->line) return 0;
        snprintf(lbuf, LINE_MAX_TEXT, "%s:%u", file, chain[i - 1]->line);
        snprintf(via, nvia, "%s", mc_spell_function(mc_inlines_str(t, chain[i - 1]->name)));
        return 1;
    }
    return 0;
}

/* A block's site for its description: "cases.cc:49, through std::vector<int>::vector(...)" when the program's
 * call went through the C++ library's plumbing (inlined there, or called: the call before the return address
 * check_callers.c kept), else where(pc). */
static void block_where(const void *pc, char *out, size_t n)
{
    char at[LINE_MAX_TEXT], via[1024];
    if (!inlined_user_line(pc, at, via, sizeof via)) {
        where(pc, at, sizeof at);
        if (!through(pc, via, sizeof via)) via[0] = 0;
    }
    if (via[0]) snprintf(out, n, "%s, through %s", at, via);
    else snprintf(out, n, "%s", at);
}

/* The line of a block's site for JSON and SARIF: the program's line when the call lies in inlined plumbing */
static void block_line(const void *pc, const char **line, char *lbuf)
{
    char via[1024];
    if (inlined_user_line(pc, lbuf, via, sizeof via)) *line = lbuf;
}

/* A rewrite run's check runtime (check_stackvars.c): the program's return addresses above a site, by the
 * frame-pointer chain from rbp (0: found from a wrapper's return address); weak, as only that runtime has it. */
__attribute__((weak)) int mc_frames_above(uintptr_t at, int ret, uintptr_t rbp, uint64_t *out, int max);
/* set by check_rwprobe.c around an access's report: its site is the instruction, the program's %rbp this */
__thread int mc_site_insn __attribute__((tls_model("initial-exec")));
__thread uintptr_t mc_site_rbp __attribute__((tls_model("initial-exec")));

/* whether the report's site is a return address: a fault's pc is the instruction, as a rewrite run's
 * trampoline's; a wrapper's site, and every site of the runtime's (a check call's), a return address */
static int site_ret(void) { return check_function_of ? mc_frame0_return : !mc_site_insn; }

/* The access's frames: its site, then the return addresses run --check found above it (mc_frames: the agent's,
 * or in a rewrite run the runtime's own, mc_frames_above); none when there are no return addresses and the
 * site is in no inlined code (the report's line says it all). */
static void name_frames(const void *pc)
{
    fr.n = 0;
    int ret0 = site_ret();
    uint64_t own[MC_MAX_FRAMES];
    int mine = 0;
    if (!mc_nframes && mc_frames_above && mc_stack_depth > 1) {
        int max = mc_stack_depth - 1 < MC_MAX_FRAMES - 1 ? mc_stack_depth - 1 : MC_MAX_FRAMES - 1;
        mine = mc_frames_above((uintptr_t)pc, ret0, mc_site_insn ? mc_site_rbp : 0, own, max);
        if (mine > 0) { mc_frames = own; mc_nframes = mine; }
    }
    add_frames(&fr, (uintptr_t)pc, ret0, mc_nframes > 0);
    for (int i = 0; i < mc_nframes; i++) add_frames(&fr, (uintptr_t)mc_frames[i], 1, 1);
    if (mine > 0) { mc_frames = NULL; mc_nframes = 0; }
    mc_sarif_stack(fr.ref, fr.n);
}

/* The allocating and freeing calls' frames, when they lie in inlined code (NULL pc: none). */
static void name_block_frames(const void *alloc_pc, const void *free_pc)
{
    fr_alloc.n = fr_free.n = 0;
    if (alloc_pc) add_frames(&fr_alloc, (uintptr_t)alloc_pc, 1, 0);
    if (free_pc) add_frames(&fr_free, (uintptr_t)free_pc, 1, 0);
    mc_sarif_block_stacks(fr_alloc.ref, fr_alloc.n, fr_free.ref, fr_free.n);
}

static void put_frame_lines(struct out *l, const struct frames *f)
{
    for (int k = 0; k < f->n; k++) {
        put(l, "\n    #%d %s", k, f->line[k][0] ? f->line[k] : f->code[k]);
        if (f->line[k][0]) put(l, " (%s)", f->code[k]);
        if (f->fn[k][0]) put(l, " in %s", f->fn[k]);
        if (f->inlined[k]) put(l, " (inlined)");
    }
}
static void put_frames(struct out *l)
{
    put_frame_lines(l, &fr);
    if (fr_alloc.n) { put(l, "\n  allocated at:"); put_frame_lines(l, &fr_alloc); }
    if (fr_free.n) { put(l, "\n  freed at:"); put_frame_lines(l, &fr_free); }
    fr_alloc.n = fr_free.n = 0;
}
/* "frames": [{"code", "line", "function"[, "inlined": true]}], innermost first */
static void put_json_frame_list(struct out *j, const struct frames *f)
{
    put(j, ",\"frames\":[");
    for (int k = 0; k < f->n; k++) {
        put(j, "%s{\"code\":", k ? "," : "");
        put_json(j, f->code[k]);
        put(j, ",\"line\":");
        put_json(j, f->line[k][0] ? f->line[k] : NULL);
        put(j, ",\"function\":");
        put_json(j, f->fn[k][0] ? f->fn[k] : NULL);
        if (f->inlined[k]) put(j, ",\"inlined\":true");
        put(j, "}");
    }
    put(j, "]");
}
/* the JSON record's "frames", when there are frames */
static void put_json_frames(struct out *j)
{
    if (fr.n) put_json_frame_list(j, &fr);
}
/* a block's "allocated"/"freed" site: {"code", "line"[, "frames"]} */
static void put_json_site(struct out *j, const char *key, const char *code, const char *line, const struct frames *f)
{
    put(j, ",\"%s\":{\"code\":", key);
    put_json(j, code);
    put(j, ",\"line\":");
    put_json(j, line);
    if (f && f->n) put_json_frame_list(j, f);
    put(j, "}");
}

static void report_access(uintptr_t addr, size_t size, enum mc_access access, const void *pc, const char *by,
                          uintptr_t span_lo, uintptr_t span_hi);

void mc_report_access(uintptr_t addr, size_t size, enum mc_access access, const void *pc, const char *by)
{
    report_access(addr, size, access, pc, by, 0, 0);
}

/* A loop check: [span_lo, span_hi) is the part of the loop's range that may not be touched, named as a range
 * when it holds more than one access: "+50..+99 (...) written 1 byte at a time by the loop, 0..49 bytes past its end". */
void mc_report_loop(uintptr_t bad, size_t size, enum mc_access access, const void *pc, uintptr_t span_lo, uintptr_t span_hi)
{
    report_access(bad, size, access, pc, "the loop", span_hi - span_lo > size ? span_lo : 0, span_hi - span_lo > size ? span_hi : 0);
}

static void emit_access(const struct object *op, uintptr_t bad, size_t size, enum mc_access access, const void *pc,
                        const char *by, uintptr_t span_lo, uintptr_t span_hi);

static void report_access(uintptr_t addr, size_t size, enum mc_access access, const void *pc, const char *by,
                          uintptr_t span_lo, uintptr_t span_hi)
{
    uintptr_t bad = mc_first_bad(addr, size ? size : 1);
    if (!bad) bad = addr;
    struct object o;
    pthread_mutex_lock(&report_lock);
    classify(bad, &o);
    if (mc_continue && seen(o.kind, pc)) { pthread_mutex_unlock(&report_lock); return; }
    emit_access(&o, bad, size, access, pc, by, span_lo, span_hi);
    pthread_mutex_unlock(&report_lock);
    finish_error();
}

/* A SIGSEGV or SIGBUS no check foresaw, which is about to kill the program (it has no handler of its own):
 * memtrace run --check's word for what ASan calls "SEGV on unknown address". An address in the first 64 KB is
 * a null dereference, worded as a check's; any other a wild access, with why the kernel refused it (`why`,
 * e.g. "unmapped memory"). size 0: not known (then "read"/"written" alone); known 0: the address is not known
 * either (a general protection fault carries none). Does not stop the program: the caller lets the signal kill
 * it, as it would natively, after this line (and the summary, when asked). */
void mc_report_segv(uintptr_t addr, int known, size_t size, enum mc_access access, const void *pc, const char *why)
{
    struct object o;
    memset(&o, 0, sizeof o);
    pthread_mutex_lock(&report_lock);
    if (!known) {
        o.kind = "wild access"; o.json_kind = "wild-access";
        snprintf(o.name, sizeof o.name, "<unknown address>");
        snprintf(o.desc, sizeof o.desc, "SEGV on unknown address: %s", why);
    } else if (addr < ((uintptr_t)1 << 16)) {
        o.kind = "null dereference"; o.json_kind = "null-dereference";
        snprintf(o.name, sizeof o.name, "NULL");
        snprintf(o.desc, sizeof o.desc, "the page at address 0, never mapped");
        o.offset = (long)addr;
        o.size = (size_t)1 << 16;
        o.known = 1;
    } else {
        o.kind = "wild access"; o.json_kind = "wild-access";
        snprintf(o.name, sizeof o.name, "0x%lx", (unsigned long)addr);
        snprintf(o.desc, sizeof o.desc, "SEGV on unknown address: %s", why);
    }
    o.region = "unknown";
    emit_access(&o, addr, size, access, pc, NULL, 0, 0);
    errors++;
    if (want_summary()) summary();
    pthread_mutex_unlock(&report_lock);
    fflush(NULL);
}

/* An access that leaves the object its address came from, when the caller knows the object's extent rather
 * than a shadow marks it: memtrace run --check's globals of an unmodified binary (their symbols' st_size, no
 * redzones: check_globals.c) and its stack frames. Worded as the shadow's reports are: "global overflow: g+40
 * (a global of 40 bytes) written 4 bytes, 0 bytes past its end, at ..."; underflows with a negative offset. */
void mc_report_extent(uintptr_t addr, size_t size, enum mc_access access, const void *pc, const char *by,
                      const struct mc_extent *x)
{
    struct object o;
    memset(&o, 0, sizeof o);
    uintptr_t end = x->beg + x->size, bad = addr >= x->beg && addr < end ? end : addr;
    int stack = strcmp(x->region, "stack") == 0;
    if (bad < x->beg) {
        o.kind = stack ? "stack underflow" : "global underflow";
        o.json_kind = stack ? "stack-underflow" : "global-underflow";
        o.distance = -(long)(x->beg - bad);
    } else {
        o.kind = stack ? "stack overflow" : "global overflow";
        o.json_kind = stack ? "stack-overflow" : "global-overflow";
        o.distance = (long)(bad - end);
    }
    o.offset = (long)(bad - x->beg);
    o.size = x->size;
    o.region = x->region;
    o.known = 1;
    snprintf(o.name, sizeof o.name, "%s", x->name);
    snprintf(o.desc, sizeof o.desc, "%s", x->desc);
    pthread_mutex_lock(&report_lock);
    if (mc_continue && seen(o.kind, pc)) { pthread_mutex_unlock(&report_lock); return; }
    emit_access(&o, bad, size, access, pc, by, 0, 0);
    pthread_mutex_unlock(&report_lock);
    finish_error();
}

/* A return through a return address an overflow overwrote (memtrace run --check, where no redzone showed the
 * overflow when it happened): said when the ret faults, as a stack overflow of the frame of fn (the function
 * whose ret it is, NULL when not known: the fault came at the address returned to). pc: the ret, or NULL. Like
 * mc_report_segv, does not stop the program, which dies of the signal after this line. */
void mc_report_smash(uintptr_t slot, uintptr_t target, const void *pc, const char *fn)
{
    struct object o;
    memset(&o, 0, sizeof o);
    pthread_mutex_lock(&report_lock);
    o.kind = "stack overflow"; o.json_kind = "stack-overflow";
    if (fn) {
        snprintf(o.name, sizeof o.name, "<stack:return address@%s>", mc_spell(fn));
        snprintf(o.desc, sizeof o.desc, "the return address in %s's frame, overwritten with 0x%lx: a stack smash, "
                 "found at its return", mc_spell(fn), (unsigned long)target);
    } else {
        snprintf(o.name, sizeof o.name, "<stack:return address>");
        snprintf(o.desc, sizeof o.desc, "a frame's return address, overwritten with 0x%lx: a stack smash, found "
                 "when the return reached it", (unsigned long)target);
    }
    o.size = 8;
    o.region = "stack";
    emit_access(&o, slot, 8, MC_READ, pc ? pc : (const void *)target, NULL, 0, 0);
    errors++;
    if (want_summary()) summary();
    pthread_mutex_unlock(&report_lock);
    fflush(NULL);
}

static void emit_access(const struct object *op, uintptr_t bad, size_t size, enum mc_access access, const void *pc,
                        const char *by, uintptr_t span_lo, uintptr_t span_hi)
{
    struct object o = *op;
    char code[1024], lbuf[8192], jbuf[8192], sline[LINE_MAX_TEXT];
    const char *line;
    name_code(pc, site_ret(), code, sizeof code, &line, sline);
    struct out l = {lbuf, sizeof lbuf, 0}, j = {jbuf, sizeof jbuf, 0};
    const char *verb = access == MC_WRITE ? "written" : "read";
    put(&l, "memtrace: %s: %s", o.kind, o.name);
    long first = o.offset + (long)(span_lo - bad), last = o.offset + (long)(span_hi - 1 - bad);
    if (o.known && span_hi) put(&l, "%+ld..%+ld", first, last);
    else if (o.known) put(&l, "%+ld", o.offset);
    if (size) put(&l, " (%s) %s %lu byte%s%s", o.desc, verb, (unsigned long)size, plural(size), span_hi ? " at a time" : "");
    else put(&l, " (%s) %s", o.desc, verb);
    if (by) put(&l, " by %s", by);
    if (o.known && span_hi && last < 0) put(&l, ", %ld..%ld bytes before its start", -last, -first);
    else if (o.known && span_hi && first >= (long)o.size) put(&l, ", %ld..%ld bytes past its end", first - (long)o.size, last - (long)o.size);
    else if (o.known && o.distance < 0) put(&l, ", %ld byte%s before its start", -o.distance, plural((size_t)-o.distance));
    else if (o.known && o.offset >= (long)o.size) put(&l, ", %ld byte%s past its end", o.distance, plural((size_t)o.distance));
    if (o.into) put(&l, ", inside %s", o.into);
    if (line) put(&l, ", at %s (%s)", line, code); else put(&l, ", at %s", code);
    put(&l, ", thread %d", gettid());
    put(&j, "{\"kind\":\"%s\",\"access\":\"%s\",\"size\":%lu,\"address\":", o.json_kind, access == MC_WRITE ? "write" : "read",
        (unsigned long)size);
    char addrname[1400];
    if (o.known) snprintf(addrname, sizeof addrname, "%s%+ld", o.name, o.offset);
    else snprintf(addrname, sizeof addrname, "%s", o.name);
    put_json(&j, addrname);
    put(&j, ",\"object\":{\"name\":");
    put_json(&j, o.name);
    put(&j, ",\"region\":\"%s\",\"size\":%lu,\"description\":", o.region, (unsigned long)o.size);
    put_json(&j, o.desc);
    char a[1024], al[1024], aline[LINE_MAX_TEXT], fline[LINE_MAX_TEXT];
    struct mc_site_ref allocated = {.code = NULL}, freed = {.code = NULL};
    if (o.block) {
        int was_freed = o.block->magic == MC_QUARANTINED;
        name_block_frames(o.block->alloc_pc, was_freed ? o.block->free_pc : NULL);
        name_code(o.block->alloc_pc, 1, a, sizeof a, &allocated.line, aline);
        block_line(o.block->alloc_pc, &allocated.line, aline);
        allocated.code = a;
        put_json_site(&j, "allocated", a, allocated.line, &fr_alloc);
        if (was_freed) {
            name_code(o.block->free_pc, 1, al, sizeof al, &freed.line, fline);
            block_line(o.block->free_pc, &freed.line, fline);
            freed.code = al;
            put_json_site(&j, "freed", al, freed.line, &fr_free);
        }
    }
    put(&j, "},\"offset\":%ld,\"distance\":%ld,", o.offset, o.distance);
    if (o.into) {
        put(&j, "\"into\":");
        put_json(&j, o.into);
        put(&j, ",");
    }
    put(&j, "\"by\":");
    put_json(&j, by);
    put(&j, ",\"at\":{\"code\":");
    put_json(&j, code);
    put(&j, ",\"line\":");
    put_json(&j, line);
    put(&j, "},\"thread\":%d", gettid());
    name_frames(pc);
    put_json_frames(&j);
    mc_sarif_result(o.json_kind, l.buf, (struct mc_site_ref){.code = code, .line = line}, allocated, freed);
    put_frames(&l);
    emit(&l, &j);
}

/* Spindle's object-level check failed: an access at addr, whose bytes are all addressable, left the live block
 * b its pointer came from and landed in another object, which no redzone shows. Worded as a heap overflow of
 * b, then ", inside" the object hit: "heap overflow: <malloc0001@run+20>+256 (a block of 16 bytes, ...)
 * written 4 bytes by the loop, 240 bytes past its end, inside <malloc0002@run+31>+144 (a block of ...)". */
void mc_report_into(const struct mc_block *b, uintptr_t addr, size_t size, enum mc_access access, const void *pc, const char *by)
{
    struct object o, t;
    memset(&o, 0, sizeof o);
    memset(&t, 0, sizeof t);
    pthread_mutex_lock(&report_lock);
    describe_block(b, &o);
    uintptr_t start = (uintptr_t)(b + 1);
    o.offset = (long)(addr - start);
    if (addr < start) {
        o.kind = "heap underflow"; o.json_kind = "heap-underflow"; o.distance = -(long)(start - addr);
    } else {
        o.kind = "heap overflow"; o.json_kind = "heap-overflow"; o.distance = (long)(addr - start - b->size);
    }
    if (mc_continue && seen(o.kind, pc)) { pthread_mutex_unlock(&report_lock); return; }
    int inside = 0;
    const struct mc_block *other = mc_block_of(addr, &inside);
    if (other && inside) { describe_block(other, &t); t.offset = (long)(addr - (uintptr_t)(other + 1)); }
    else if (!global_object(addr, &t) && !stack_object(addr, &t)) {
        snprintf(t.name, sizeof t.name, "0x%lx", (unsigned long)addr);
        snprintf(t.desc, sizeof t.desc, "memory no checked object owns");
    }
    static char into[sizeof t.name + sizeof t.desc + 32];
    if (t.known) snprintf(into, sizeof into, "%s%+ld (%s)", t.name, t.offset, t.desc);
    else snprintf(into, sizeof into, "%s (%s)", t.name, t.desc);
    o.into = into;
    emit_access(&o, addr, size, access, pc, by, 0, 0);
    pthread_mutex_unlock(&report_lock);
    finish_error();
}

/* free, delete, realloc of something that is not a live block of theirs */
void mc_report_free(const char *kind, uintptr_t ptr, const struct mc_block *b, const void *pc, const char *what)
{
    pthread_mutex_lock(&report_lock);
    if (mc_continue && seen(kind, pc)) { pthread_mutex_unlock(&report_lock); return; }
    struct object o;
    memset(&o, 0, sizeof o);
    if (b) {
        describe_block(b, &o);
        o.offset = 0;
    } else {
        /* what the pointer is: inside a block, a global, a stack variable, or nothing known */
        classify(ptr, &o);
        if (!o.known) {
            int inside = 0;
            struct mc_block *in = mc_block_of(ptr, &inside);
            if (in) { describe_block(in, &o); o.offset = (long)(ptr - (uintptr_t)(in + 1)); }
            else if (global_object(ptr, &o) || stack_object(ptr, &o)) {}
            else if (*MC_SHADOW(ptr - 8) == MC_ALLOCA_LEFT && alloca_object(ptr, &o)) {}
            else if (ptr > (uintptr_t)__builtin_frame_address(0) && ptr - (uintptr_t)__builtin_frame_address(0) < (64u << 20)) {
                snprintf(o.name, sizeof o.name, "<stack>");
                snprintf(o.desc, sizeof o.desc, "memory on the stack of thread %d", gettid());
                o.offset = 0;
                o.region = "stack";
            } else {
                snprintf(o.name, sizeof o.name, "0x%lx", (unsigned long)ptr);
                Dl_info info;
                if (dladdr((void *)ptr, &info) && info.dli_sname && info.dli_saddr) {
                    snprintf(o.name, sizeof o.name, "%s", mc_spell(info.dli_sname));
                    o.offset = (long)(ptr - (uintptr_t)info.dli_saddr);
                    o.known = 1;
                    snprintf(o.desc, sizeof o.desc, "static memory");
                    o.region = "global";
                } else {
                    snprintf(o.desc, sizeof o.desc, "not memory this allocator gave out");
                    o.region = "unknown";
                }
            }
        }
    }
    const char *jkind = kind[0] == 'd' ? "double-free" : kind[0] == 'i' ? "invalid-free" : "allocator-mismatch";
    char code[1024], lbuf[8192], jbuf[8192], sline[LINE_MAX_TEXT];
    const char *line;
    name_code(pc, site_ret(), code, sizeof code, &line, sline);
    struct out l = {lbuf, sizeof lbuf, 0}, j = {jbuf, sizeof jbuf, 0};
    put(&l, "memtrace: %s: %s of %s", kind, what, o.name);
    if (o.known) put(&l, "%+ld", o.offset);
    put(&l, " (%s", o.desc);
    if (b && kind[0] == 'a') put(&l, ", from %s", mc_family_name(b->family));
    put(&l, ")");
    if (line) put(&l, ", at %s (%s)", line, code); else put(&l, ", at %s", code);
    put(&l, ", thread %d", gettid());
    put(&j, "{\"kind\":\"%s\",\"by\":\"%s\",\"address\":", jkind, what);
    char addrname[1400];
    if (o.known) snprintf(addrname, sizeof addrname, "%s%+ld", o.name, o.offset);
    else snprintf(addrname, sizeof addrname, "%s", o.name);
    put_json(&j, addrname);
    put(&j, ",\"object\":{\"name\":");
    put_json(&j, o.name);
    put(&j, ",\"region\":\"%s\",\"size\":%lu,\"description\":", o.region ? o.region : "unknown", (unsigned long)o.size);
    put_json(&j, o.desc);
    put(&j, "},\"at\":{\"code\":");
    put_json(&j, code);
    put(&j, ",\"line\":");
    put_json(&j, line);
    put(&j, "},\"thread\":%d", gettid());
    char a[1024], al[1024], aline[LINE_MAX_TEXT], fline[LINE_MAX_TEXT];
    struct mc_site_ref allocated = {.code = NULL}, freed = {.code = NULL};
    if (o.block) {
        name_block_frames(o.block->alloc_pc, o.block->magic == MC_QUARANTINED ? o.block->free_pc : NULL);
        name_code(o.block->alloc_pc, 1, a, sizeof a, &allocated.line, aline);
        block_line(o.block->alloc_pc, &allocated.line, aline);
        allocated.code = a;
        if (o.block->magic == MC_QUARANTINED) {
            name_code(o.block->free_pc, 1, al, sizeof al, &freed.line, fline);
            block_line(o.block->free_pc, &freed.line, fline);
            freed.code = al;
        }
    }
    name_frames(pc);
    put_json_frames(&j);
    mc_sarif_result(jkind, l.buf, (struct mc_site_ref){.code = code, .line = line}, allocated, freed);
    put_frames(&l);
    emit(&l, &j);
    pthread_mutex_unlock(&report_lock);
    finish_error();
}

/* An intra-object overflow: n bytes written at d, which is addressable, where gcc's _FORTIFY_SOURCE knew the
 * destination (a struct member, by __builtin_object_size type 1) to have only field bytes. The object is the
 * block, global or stack variable d is in. */
void mc_report_field(uintptr_t d, size_t n, size_t field, const void *pc, const char *by)
{
    pthread_mutex_lock(&report_lock);
    if (mc_continue && seen("intra-object overflow", pc)) { pthread_mutex_unlock(&report_lock); return; }
    struct object o;
    memset(&o, 0, sizeof o);
    int inside = 0;
    struct mc_block *b = mc_block_of(d, &inside);
    if (b && inside) { describe_block(b, &o); o.offset = (long)(d - (uintptr_t)(b + 1)); }
    else if (global_object(d, &o) || stack_object(d, &o)) {}
    else {
        snprintf(o.name, sizeof o.name, "0x%lx", (unsigned long)d);
        snprintf(o.desc, sizeof o.desc, "memory no checked object owns");
        o.region = "unknown";
    }
    char code[1024], lbuf[8192], jbuf[8192], addrname[1400], sline[LINE_MAX_TEXT];
    const char *line;
    name_code(pc, site_ret(), code, sizeof code, &line, sline);
    if (o.known) snprintf(addrname, sizeof addrname, "%s%+ld", o.name, o.offset);
    else snprintf(addrname, sizeof addrname, "%s", o.name);
    struct out l = {lbuf, sizeof lbuf, 0}, j = {jbuf, sizeof jbuf, 0};
    put(&l, "memtrace: intra-object overflow: %s (%s) written %lu byte%s by %s into a field of %lu byte%s, %lu byte%s past the "
            "field's end", addrname, o.desc, (unsigned long)n, plural(n), by, (unsigned long)field, plural(field),
        (unsigned long)(n - field), plural(n - field));
    if (line) put(&l, ", at %s (%s)", line, code); else put(&l, ", at %s", code);
    put(&l, ", thread %d", gettid());
    put(&j, "{\"kind\":\"intra-object-overflow\",\"access\":\"write\",\"size\":%lu,\"field\":%lu,\"address\":",
        (unsigned long)n, (unsigned long)field);
    put_json(&j, addrname);
    put(&j, ",\"object\":{\"name\":");
    put_json(&j, o.name);
    put(&j, ",\"region\":\"%s\",\"size\":%lu,\"description\":", o.region ? o.region : "unknown", (unsigned long)o.size);
    put_json(&j, o.desc);
    char a[1024], aline[LINE_MAX_TEXT];
    struct mc_site_ref allocated = {.code = NULL}, none = {.code = NULL};
    if (o.block) {
        name_code(o.block->alloc_pc, 1, a, sizeof a, &allocated.line, aline);
        block_line(o.block->alloc_pc, &allocated.line, aline);
        allocated.code = a;
        put(&j, ",\"allocated\":{\"code\":");
        put_json(&j, a);
        put(&j, ",\"line\":");
        put_json(&j, allocated.line);
        put(&j, "}");
    }
    put(&j, "},\"offset\":%ld,\"distance\":%lu,\"by\":", o.offset, (unsigned long)(n - field));
    put_json(&j, by);
    put(&j, ",\"at\":{\"code\":");
    put_json(&j, code);
    put(&j, ",\"line\":");
    put_json(&j, line);
    put(&j, "},\"thread\":%d", gettid());
    mc_sarif_result("intra-object-overflow", l.buf, (struct mc_site_ref){.code = code, .line = line}, allocated, none);
    emit(&l, &j);
    pthread_mutex_unlock(&report_lock);
    finish_error();
}

/* any address's name: a block, a global, a stack variable, else hex */
static void name_any(uintptr_t addr, char *out, size_t n)
{
    struct object o;
    memset(&o, 0, sizeof o);
    int inside = 0;
    struct mc_block *b = mc_block_of(addr, &inside);
    if (b) {
        block_name(b, b->magic == MC_QUARANTINED, o.name, sizeof o.name);
        o.offset = (long)(addr - (uintptr_t)(b + 1));
        o.known = 1;
    } else if (!global_object(addr, &o) && !stack_object(addr, &o)) {
        snprintf(out, n, "0x%lx", (unsigned long)addr);
        return;
    }
    snprintf(out, n, "%s%+ld", o.name, o.offset);
}

void mc_report_overlap(uintptr_t dst, uintptr_t src, size_t size, const void *pc, const char *fn)
{
    pthread_mutex_lock(&report_lock);
    if (mc_continue && seen("overlap", pc)) { pthread_mutex_unlock(&report_lock); return; }
    char d[1400], s[1400], code[1024], lbuf[8192], jbuf[8192], sline[LINE_MAX_TEXT];
    const char *line;
    name_any(dst, d, sizeof d);
    name_any(src, s, sizeof s);
    name_code(pc, site_ret(), code, sizeof code, &line, sline);
    struct out l = {lbuf, sizeof lbuf, 0}, j = {jbuf, sizeof jbuf, 0};
    put(&l, "memtrace: overlapping copy: %s of %lu byte%s from %s to %s", fn, (unsigned long)size, plural(size), s, d);
    if (line) put(&l, ", at %s (%s)", line, code); else put(&l, ", at %s", code);
    put(&l, ", thread %d", gettid());
    put(&j, "{\"kind\":\"overlap\",\"by\":\"%s\",\"size\":%lu,\"source\":", fn, (unsigned long)size);
    put_json(&j, s);
    put(&j, ",\"destination\":");
    put_json(&j, d);
    put(&j, ",\"at\":{\"code\":");
    put_json(&j, code);
    put(&j, ",\"line\":");
    put_json(&j, line);
    put(&j, "},\"thread\":%d", gettid());
    struct mc_site_ref none = {.code = NULL};
    mc_sarif_result("overlap", l.buf, (struct mc_site_ref){.code = code, .line = line}, none, none);
    emit(&l, &j);
    pthread_mutex_unlock(&report_lock);
    finish_error();
}

void mc_report_leaks(size_t blocks, size_t bytes, const struct mc_block *const *sites, const size_t *counts,
                     const size_t *site_bytes, size_t nsites)
{
    pthread_mutex_lock(&report_lock);
    for (size_t i = 0; i < nsites; i++) {
        struct object o;
        memset(&o, 0, sizeof o);
        describe_block(sites[i], &o);
        char lbuf[8192], jbuf[8192];
        struct out l = {lbuf, sizeof lbuf, 0}, j = {jbuf, sizeof jbuf, 0};
        put(&l, "memtrace: leak: %s (%s) unreachable at exit", o.name, o.desc);
        if (counts[i] > 1)
            put(&l, ", with %lu more block%s from the same call, %lu bytes in all", (unsigned long)(counts[i] - 1),
                plural(counts[i] - 1), (unsigned long)site_bytes[i]);
        char a[1024], aline[LINE_MAX_TEXT];
        const char *ln;
        name_code(sites[i]->alloc_pc, 1, a, sizeof a, &ln, aline);
        block_line(sites[i]->alloc_pc, &ln, aline);
        put(&j, "{\"kind\":\"leak\",\"object\":{\"name\":");
        put_json(&j, o.name);
        put(&j, ",\"region\":\"heap\",\"size\":%lu,\"description\":", (unsigned long)o.size);
        put_json(&j, o.desc);
        put(&j, ",\"allocated\":{\"code\":");
        put_json(&j, a);
        put(&j, ",\"line\":");
        put_json(&j, ln);
        put(&j, "}},\"blocks\":%lu,\"bytes\":%lu", (unsigned long)counts[i], (unsigned long)site_bytes[i]);
        struct mc_site_ref none = {.code = NULL};
        mc_sarif_result("leak", l.buf, (struct mc_site_ref){.code = a, .line = ln}, none, none);
        emit(&l, &j);
    }
    char lbuf[256];
    struct out l = {lbuf, sizeof lbuf, 0};
    put(&l, "memtrace: leaks: %lu block%s, %lu bytes, from %lu call%s", (unsigned long)blocks, plural(blocks),
        (unsigned long)bytes, (unsigned long)nsites, plural(nsites));
    put(&l, "\n");
    int out = report_out();
    if (out >= 0) write_all(out, l.buf, l.len);
    leaked = 1;
    pthread_mutex_unlock(&report_lock);
}

static void summary(void)
{
    struct mc_counts c;
    mc_counts_total(&c);
    uint64_t sites = 0, kept = 0, merged = 0, hoisted = 0, ranges = 0, loops = 0;
    for (int i = 0; i < ntables; i++) {
        sites += tables[i]->checks; kept += tables[i]->kept; merged += tables[i]->merged;
        hoisted += tables[i]->hoisted; ranges += tables[i]->ranges; loops += tables[i]->loops;
    }
    char buf[1024], jbuf[1024];
    struct out l = {buf, sizeof buf, 0}, j = {jbuf, sizeof jbuf, 0};
    put(&l, "memtrace: check summary: %lu accesses checked by %lu checks (%lu loop entries, %lu block ranges, "
            "%lu libc calls); statically %lu of %lu checks removed (%lu by loop checks, %lu by block ranges), "
            "%lu added (%lu loop, %lu range); %d error%s",
        (unsigned long)c.accesses, (unsigned long)c.checks, (unsigned long)c.loop_checks, (unsigned long)c.range_checks,
        (unsigned long)c.libc_checks, (unsigned long)(merged + hoisted), (unsigned long)sites, (unsigned long)hoisted,
        (unsigned long)merged, (unsigned long)(ranges + loops), (unsigned long)loops, (unsigned long)ranges, errors,
        plural((size_t)errors));
    put(&j, "{\"kind\":\"summary\",\"accesses\":%lu,\"checks\":%lu,\"loop_checks\":%lu,\"range_checks\":%lu,"
            "\"libc_checks\":%lu,\"static\":{\"checks\":%lu,\"kept\":%lu,\"removed_by_loops\":%lu,"
            "\"removed_by_ranges\":%lu,\"loop_checks\":%lu,\"range_checks\":%lu},\"errors\":%d",
        (unsigned long)c.accesses, (unsigned long)c.checks, (unsigned long)c.loop_checks, (unsigned long)c.range_checks,
        (unsigned long)c.libc_checks, (unsigned long)sites, (unsigned long)kept, (unsigned long)hoisted,
        (unsigned long)merged, (unsigned long)loops, (unsigned long)ranges, errors);
    emit(&l, &j);
}

static void at_exit(void)
{
    if (mc_leaks_on) mc_leak_check();
    if (want_summary()) summary();
    if (leaked || (mc_continue && errors)) {
        fflush(NULL);
        _exit(errors ? exit_code : 23);
    }
}

void mc_init_report(void)
{
    const char *mode = getenv("MEMTRACE_CHECK");
    if (mode) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", mode);
        for (char *save, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
            if (strcmp(w, "continue") == 0) mc_continue = 1;
            else if (strcmp(w, "stop") == 0) mc_continue = 0;
            else if (strcmp(w, "summary") == 0) summary_on = 1;
            else if (strcmp(w, "noleaks") == 0) mc_leaks_on = 0;
            else if (strcmp(w, "mangled") == 0) mc_keep_mangled = 1;
            else if (strcmp(w, "globals") == 0) {} /* run --check's fault mode reads it (check_globals.c) */
            else if (strcmp(w, "noreturn") == 0) {   /* no fake frames: no stack use after return (check_fakestack.c) */
                if (&__asan_option_detect_stack_use_after_return) __asan_option_detect_stack_use_after_return = 0;
            }
            else {
                char msg[400];
                int k = snprintf(msg, sizeof msg, "memtrace: check: MEMTRACE_CHECK: unknown word '%s' "
                                 "(continue, stop, summary, noleaks, mangled, globals, noreturn)\n", w);
                write_all(2, msg, (size_t)k < sizeof msg ? (size_t)k : sizeof msg - 1);
                _exit(2);
            }
        }
    }
    /* memtrace cc's depth of allocation stacks: 1 keeps each report to its line (no inlined frames) */
    const char *depth = getenv("MEMTRACE_STACK_DEPTH");
    if (depth && atoi(depth) >= 1) mc_stack_depth = atoi(depth);
    const char *code = getenv("MEMTRACE_CHECK_EXITCODE");
    if (code && *code) {
        char *end;
        long v = strtol(code, &end, 10);
        if (*end || v < 0 || v > 255) {
            static const char msg[] = "memtrace: check: MEMTRACE_CHECK_EXITCODE must be 0..255\n";
            write_all(2, msg, sizeof msg - 1);
            _exit(2);
        }
        exit_code = (int)v;
    }
    const char *q = getenv("MEMTRACE_CHECK_QUARANTINE");
    if (q && *q) {
        char *end;
        unsigned long long v = strtoull(q, &end, 10);
        if (*end) {
            static const char msg[] = "memtrace: check: MEMTRACE_CHECK_QUARANTINE must be a number of bytes\n";
            write_all(2, msg, sizeof msg - 1);
            _exit(2);
        }
        mc_set_quarantine((size_t)v);
    }
    const char *json = getenv("MEMTRACE_CHECK_JSON");
    if (json && *json) {
        int fd = open(json, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0 || strlen(json) >= sizeof json_path) {
            char msg[600];
            int k = snprintf(msg, sizeof msg, "memtrace: check: cannot create %s: %m%s\n", json,
                             errno == EEXIST ? " (memtrace writes no log over an existing file: name a new one)" : "");
            write_all(2, msg, (size_t)k < sizeof msg ? (size_t)k : sizeof msg - 1);
            _exit(2);
        }
        close(fd);
        /* an absolute path, so that a chdir of the program's does not move the file */
        if (json[0] != '/' && getcwd(json_path, sizeof json_path) && strlen(json_path) + strlen(json) + 2 < sizeof json_path) {
            strcat(json_path, "/");
            strcat(json_path, json);
        } else {
            snprintf(json_path, sizeof json_path, "%s", json);
        }
    }
    const char *sarif = getenv("MEMTRACE_CHECK_SARIF");
    if (sarif && *sarif && mc_sarif_init(sarif) != 0) {
        char msg[600];
        int k = snprintf(msg, sizeof msg, "memtrace: check: cannot create %s: %m%s\n", sarif,
                         errno == EEXIST ? " (memtrace writes no log over an existing file: name a new one)" : "");
        write_all(2, msg, (size_t)k < sizeof msg ? (size_t)k : sizeof msg - 1);
        _exit(2);
    }
    atexit(at_exit);
}
