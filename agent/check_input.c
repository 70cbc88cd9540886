/*
 * check_input.c: `memtrace run --check`'s input functions into stack variables and the executable's globals
 * (docs/check.md, "Stack variables"), for a binary nobody rebuilt. What libc's input functions write into
 * the heap faults and is checked there (check_run.c); a stack buffer is not traced, and a global's writes by
 * libc's copy loops are checked one instruction at a time from wherever libc's cursor is, so an overflow of
 * either went unseen or was said at a libc address. The agent wraps gets, fgets and the scanf family (scanf,
 * fscanf, sscanf, their v-forms and their __isoc99_ names, which <stdio.h> calls) and, after the call, checks
 * what it wrote, as the compiled-in checker's check_io.c does: gets's and fgets's line and terminator (fgets
 * within its size), each assigned %s and %[...]'s string and terminator, %Nc's N characters, wide ones for
 * %ls %lc (check/check_scan.h walks the format). A range on the calling thread's stack is checked against its
 * frame's DWARF variable (check_locals.c), one in the executable's globals against its symbol
 * (check_globals.c, with MEMTRACE_CHECK=globals), and reported as memcpy's ranges are:
 *   memtrace: stack overflow: <stack:word@scan_word>+8 (a variable of 8 bytes, declared at line 26 of
 *   scan_word) written 9 bytes by scanf, 0 bytes past its end, at run_input+4709, thread 8104
 * While the call runs, libc's faults on the globals are not reported (the range after it is), so the report
 * names the function and the program's line rather than a libc address.
 *
 * What it gets wrong: the check is made after the call, as AddressSanitizer's interceptors make it, so the
 * bytes past the buffer are written before the report (the first report stops the program before the
 * function returns into a smashed frame); the heap is left to its faults (said at libc's store, without the
 * function's name); the wide forms (wscanf, fgetws), fgets_unlocked, getline, the __isoc23_ names (glibc 2.38)
 * and the _FORTIFY_SOURCE _chk forms are not wrapped; a positional format (%1$s) is not walked; stack
 * variables only in frames with a frame pointer and DWARF (-O0 -g), as check_locals.c says.
 */
#include <stdio.h>

#include "agent.h"
#include "check/check.h"
#include "check/check_scan.h"

#define CALLER ((uintptr_t)__builtin_return_address(0))

char *gets(char *s); /* gone from C11's <stdio.h>, not from glibc nor from old programs */

static struct {
    char *(*gets)(char *);
    char *(*fgets)(char *, int, FILE *);
    int (*vfscanf[2])(FILE *, const char *, va_list);  /* plain (GNU %a), then __isoc99_ */
    int (*vsscanf[2])(const char *, const char *, va_list);
} rl;

/* At the agent's start, as check_locals_resolve: no dlsym later, inside a handler. */
void check_input_resolve(void)
{
    rl.gets = (typeof(rl.gets))dlsym(RTLD_NEXT, "gets");
    rl.fgets = (typeof(rl.fgets))dlsym(RTLD_NEXT, "fgets");
    rl.vfscanf[0] = (typeof(rl.vfscanf[0]))dlsym(RTLD_NEXT, "vfscanf");
    rl.vsscanf[0] = (typeof(rl.vsscanf[0]))dlsym(RTLD_NEXT, "vsscanf");
    rl.vfscanf[1] = (typeof(rl.vfscanf[1]))dlsym(RTLD_NEXT, "__isoc99_vfscanf");
    rl.vsscanf[1] = (typeof(rl.vsscanf[1]))dlsym(RTLD_NEXT, "__isoc99_vsscanf");
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

EXPORT char *gets(char *s)
{
    uintptr_t pc = CALLER;
    if (!wanted(pc)) return rl.gets(s);
    ts.in_input++;
    char *r = rl.gets(s);
    ts.in_input--;
    if (!r) return r;
    int mine = enter_untraced();
    gather(s, mc_scan_len(s) + 1, NULL, NULL);
    if (mine) leave_untraced();
    check_gathered(pc, "gets");
    return r;
}

EXPORT char *fgets(char *s, int n, FILE *f)
{
    uintptr_t pc = CALLER;
    if (!wanted(pc)) return rl.fgets(s, n, f);
    ts.in_input++;
    char *r = rl.fgets(s, n, f);
    ts.in_input--;
    if (!r) return r;
    int mine = enter_untraced();
    size_t len = 0; /* what it wrote: the line read and its terminator, within n */
    while (len + 1 < (size_t)n && s[len]) len++;
    gather(s, len + 1, NULL, NULL);
    if (mine) leave_untraced();
    check_gathered(pc, "fgets");
    return r;
}

static int scan_at(FILE *in, const char *s, int form, const char *fmt, va_list ap, uintptr_t pc, const char *fn)
{
    if (!wanted(pc)) return in ? rl.vfscanf[form](in, fmt, ap) : rl.vsscanf[form](s, fmt, ap);
    va_list walk;
    va_copy(walk, ap);
    ts.in_input++;
    int r = in ? rl.vfscanf[form](in, fmt, ap) : rl.vsscanf[form](s, fmt, ap);
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

/* each name in both forms (check_scan.h) */
MC_SCANF_ENTRY_POINTS(EXPORT, scan_at, "", gnu, 0)
MC_SCANF_ENTRY_POINTS(EXPORT, scan_at, "__isoc99_", c99, 1)
