/*
 * check_locals.c: `memtrace run --check`'s stack variables and source lines (docs/check.md, "Stack variables"),
 * for a binary nobody rebuilt: it has no redzones between its locals, so their extents come from its DWARF,
 * which memtrace read at launch (org.memtrace.symbols.DwarfLocals) and handed over as a file named by
 * MEMTRACE_CHECK_FRAMES (created O_EXCL 0600 by memtrace, opened here O_NOFOLLOW, every count checked against
 * its size before use): its layout and the walk are check/check_frames.h's, shared with rewrite mode's check
 * runtime (check/check_stackvars.c).
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
#include "check/check_frames.h"

static struct mc_frames lc;

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
    dl_iterate_phdr(exe_bias, &lc.bias);
    frames_parse(&lc, (const unsigned char *)map, (size_t)len); /* a table that does not add up: none */
}

/* The inlined calls' table that came behind the locals (check_stacks.c's frames), and the executable's bias. */
const unsigned char *check_locals_inlines(size_t *n, uintptr_t *bias)
{
    *n = lc.ready ? lc.ntail : 0;
    *bias = lc.bias;
    return lc.ready ? lc.tail : NULL;
}

/* "file:line" of an address of the executable, or NULL; the text lives until 16 more are asked for (a */
/* report asks for one per frame, under the report lock).                                              */
const char *check_line_of(uintptr_t pc)
{
    static char ring[16][512];
    static unsigned next;
    return frames_line_of(&lc, pc, ring[next++ % 16], sizeof ring[0]);
}

/* a frame record of the program's, read as the program could (a page it protects answers EFAULT) */
static int read_record(uint64_t w[2], uintptr_t at) { return user_transfer(w, at, 16, 0) != 0; }

/* The range [p, p+n) a block function of the program (pc: its call's return address) reads or writes, when */
/* it is on the stack in a frame the table describes: against that frame's variable. Returns whether it was */
/* reported.                                                                                                 */
static int stack_range_from(uintptr_t p, size_t n, int write, uintptr_t pc, const char *by, uintptr_t rbp, uintptr_t low)
{
    struct mc_extent x;
    mt_memzero(&x, sizeof x);
    if (!frames_walk(&lc, p, n, pc, rbp, low, read_record, &x)) return 0;
    check_report_extent(p, n, write, pc, by, &x);
    return 1;
}

int check_stack_range(uintptr_t p, size_t n, int write, uintptr_t pc, const char *by)
{
    if (!lc.ready || !n) return 0;
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    if (p < here || p - here > (64UL << 20)) return 0; /* not on this thread's stack */
    /* the caller's %rbp: saved by the frame whose return address is pc (the wrapper's), found upwards */
    uintptr_t rbp = frames_caller_rbp(here, pc, read_record);
    return rbp ? stack_range_from(p, n, write, pc, by, rbp, here) : 0;
}

/* The same for a system call's buffer (check_syscall_out): pc is the libc function's return address into the */
/* program and rbp the program's %rbp at the call (libc's leaf wrapper keeps it), sp its stack pointer.        */
int check_stack_range_at(uintptr_t p, size_t n, int write, uintptr_t pc, const char *by, uintptr_t rbp, uintptr_t sp)
{
    if (!lc.ready || !n || p < sp || p - sp > (64UL << 20)) return 0;
    return stack_range_from(p, n, write, pc, by, rbp, sp);
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
