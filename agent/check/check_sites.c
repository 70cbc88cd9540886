/*
 * check_sites.c: code named in the checker's reports (check_report.h lists the files that make them). Names
 * are memtrace's (docs/naming.md), independent of where ASLR put things, so two runs' reports diff: code is
 * named by the call-site tables that `memtrace cc --check` puts in every object it builds (function, offset
 * of the return address, file:line from the assembly's .loc; one more per comdat group, C++ templates and inline
 * functions, which the linker keeps or drops with the group's code), registered at start by __memtrace_check_sites;
 * else by the function its module's .symtab says holds it (check_names.c: a binary nobody rebuilt, static
 * functions included) with the executable's DWARF line (check_line_of), else by dladdr, else module+offset.
 * C++ symbols are spelled as the source spells them (Foo::bar(int)+115) by the system's c++filt
 * (check_demangle.c), unless MEMTRACE_CHECK has `mangled`. Also here: whether a function is the C++ library's
 * allocation plumbing (std::, __gnu_cxx::, operator new and delete), which a block's site looks through
 * (docs/check.md, "Sites in the user's code"), and the function a call went to, read from its call
 * instruction, for "allocated at cases.cc:50, through std::vector<int>::vector(...)".
 *
 * Output: "bad+115" and "x.c:39"; "libc.so.6+1234" for code no symbol names; the summary's static counts.
 *
 * What it gets wrong: the call-site tables are searched one after the other (reports are rare; a table per
 * object and per comdat group with checks, at most 65536 of them: more are not named by table); a call through anything but a direct call or a
 * PLT stub (a pointer, a tail jump) is not seen through.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "check.h"
#include "mt_common.h"
#include "check_report.h"

struct site { const void *ret, *func, *end; const char *name, *loc; };
struct table {
    uint32_t version, nsites, checks, kept, merged, hoisted, ranges, loops;
    struct site sites[];
};
#define MAX_TABLES 65536   /* untouched slots cost no memory: .bss */
static const struct table *tables[MAX_TABLES];
static int ntables;

MC_EXPORT void __memtrace_check_sites(const struct table *t)
{
    if (t->version != 1) return;
    pthread_mutex_lock(&mc_report_lock);
    if (ntables < MAX_TABLES) tables[ntables++] = t;
    pthread_mutex_unlock(&mc_report_lock);
}

static const struct site *site_of(const void *pc)
{
    for (int i = 0; i < ntables; i++)
        for (uint32_t j = 0; j < tables[i]->nsites; j++)
            if (tables[i]->sites[j].ret == pc) return &tables[i]->sites[j];
    return NULL;
}

/* the site of the checked function whose extent holds pc (a frame's own address, no call's return), or NULL */
static const struct site *site_around(const void *pc)
{
    for (int i = 0; i < ntables; i++)
        for (uint32_t j = 0; j < tables[i]->nsites; j++) {
            const struct site *c = &tables[i]->sites[j];
            if (c->func <= pc && pc < c->end) return c;
        }
    return NULL;
}

/* code: "bad+115" and, when known, line "x.c:39". The call-site table names both; code no table covers is named
 * function+offset by its module's .symtab, else by an exported symbol (dladdr), else module+offset; its line,
 * when lbuf is given (MC_LINE_MAX bytes, which *line then points into), is the executable's DWARF line
 * table's: at pc, or when ret (pc a return address) at the call before it, as ASan and memcheck name a caller. */
void mc_name_code(const void *pc, int ret, char *code, size_t n, const char **line, char *lbuf)
{
    *line = NULL;
    const struct site *s = site_of(pc);
    if (s) *line = s->loc;
    else s = site_around(pc);   /* no call returns there: the function whose extent holds it */
    if (s) {
        snprintf(code, n, "%s+%ld", mc_spell(s->name), (long)((const char *)pc - (const char *)s->func));
        return;
    }
    if (lbuf && check_line_of && pc) {
        const char *l = check_line_of((uintptr_t)pc - (ret ? 1 : 0));
        if (l) { snprintf(lbuf, MC_LINE_MAX, "%s", l); *line = lbuf; }
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
void mc_where(const void *pc, char *out, size_t n)
{
    char code[1024], lbuf[MC_LINE_MAX];
    const char *line;
    mc_name_code(pc, 1, code, sizeof code, &line, lbuf);
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
    if (pthread_mutex_trylock(&mc_report_lock) != 0) return -1;
    const char *fn = mc_code_function ? mc_code_function(pc, NULL) : NULL;
    Dl_info info;
    if (!fn && dladdr((void *)pc, &info)) fn = info.dli_sname;
    int p = fn ? mc_plumbing_name(fn) : -1;
    pthread_mutex_unlock(&mc_report_lock);
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
int mc_through(const void *pc, char *out, size_t n)
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

/* the function a code address of a checked object lies in, by its call-site table, else (a binary nobody
 * rebuilt) by its module's .symtab */
const char *mc_site_function(const void *pc)
{
    const struct site *c = site_around(pc);
    if (c) return c->name;
    return mc_code_function ? mc_code_function((uintptr_t)pc, NULL) : NULL;
}

/* what memtrace cc --check did to the checks of every object that registered its table, for the summary */
void mc_static_counts(struct mc_static *s)
{
    *s = (struct mc_static){0};
    for (int i = 0; i < ntables; i++) {
        s->checks += tables[i]->checks; s->kept += tables[i]->kept; s->merged += tables[i]->merged;
        s->hoisted += tables[i]->hoisted; s->ranges += tables[i]->ranges; s->loops += tables[i]->loops;
    }
}
