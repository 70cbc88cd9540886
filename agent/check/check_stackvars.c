/*
 * check_stackvars.c: `memtrace run --check --mode rewrite`'s checks of the libc functions' ranges against the
 * executable's stack variables (docs/check.md, "Stack variables"), as fault mode's agent makes them
 * (check_locals.c): a binary nobody rebuilt has no redzones between its locals, so the shadow says nothing
 * there; their extents come from its DWARF, which memtrace read at launch and handed over as the file named by
 * MEMTRACE_CHECK_FRAMES (the table and the walk are check_frames.h's). The rewrite runtime (rt_init.c) calls
 * __memtrace_check_init before main; this takes the path then and the variable out of the environment, opens
 * the file O_NOFOLLOW and checks every count against its size. A `memtrace cc --check` program never gets
 * a table (nothing calls __memtrace_check_init there): gcc's redzones do this.
 *
 * Checked: every range a wrapper of this runtime checks against the shadow (check_libc.c: memcpy memmove
 * memset strcpy strcat ...; check_format.c: the sprintf family's destination; check_io.c: read fgets gets
 * scanf ... by what they wrote) and finds addressable, when it lies on the calling thread's stack: the
 * program's frame that holds it is found on the frame-pointer chain from the wrapper's return address, and
 * the range must stay inside the variable it belongs to (a range that starts in a global: check_symglobals.c's
 * object check, mc_symglobal_check). Reported as fault mode reports it:
 *   memtrace: stack overflow: <stack:buf@run>+24 (a variable of 24 bytes, declared at line 7 of run) written
 *   40 bytes by memset, 0 bytes past its end, at plain-O0-s_memset_sizeof+4534, thread 8104
 *
 * What it gets wrong: as fault mode, only the executable's frames that keep a frame pointer (gcc -O0, or
 * -fno-omit-frame-pointer) and their DW_OP_fbreg variables, but for the wrapper's direct caller when it is an
 * optimised function the table gives its CFA for (frames_rsp_caller: a range from inside a variable past its end); allocas and VLAs are not checked; a frame's
 * variables are all taken as live. The input functions' ranges are checked after the call (the bytes
 * they wrote), so their overflow has happened when it is reported, as in fault mode (gets and __gets_chk
 * excepted: check_io.c reads their line aside first).
 * A _FORTIFY_SOURCE function's length over the size gcc knew, into a stack buffer the shadow says nothing of,
 * is a stack overflow (mc_fortify_stack), named by the variable when DWARF knows it, else by gcc's size:
 *   memtrace: stack overflow: <stack>+16 (an object of 16 bytes on the stack, the size _FORTIFY_SOURCE gave
 *   memcpy; no variable known there) written 24 bytes by memcpy, 8 bytes past its end, at prog+4570, thread 8104
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "check_frames.h"

static struct mc_frames table;
int mc_rewritten; /* mc_stackvars_init ran: a rewrite run, whose stack frames have no redzones */

static int exe_bias(struct dl_phdr_info *info, size_t size, void *arg)
{
    *(uintptr_t *)arg = info->dlpi_addr;
    return 1; /* the first is the executable */
}

/* by hand: this runs before the wrappers know libc's functions; the value after the name k, or NULL */
static const char *value_of(const char *e, const char *k)
{
    while (*k && *e == *k) e++, k++;
    return *k ? NULL : e;
}

/* MEMTRACE_CHECK_FRAMES's table and MEMTRACE_CHECK_STACK_DEPTH, both variables out of the environment: the */
/* program and what it execs see the environment they would see untraced.                                   */
void mc_stackvars_init(void)
{
    extern char **environ;
    const char *path = NULL;
    mc_rewritten = 1;
    char **w = environ;
    for (char **r = environ; r && *r; r++) {
        const char *depth = value_of(*r, "MEMTRACE_CHECK_STACK_DEPTH=");
        if (value_of(*r, "MEMTRACE_CHECK_FRAMES=")) { path = *r + 22; continue; }
        if (depth) { /* --stack-depth (the runtime took MEMTRACE_STACK_DEPTH out before this ran) */
            int d = 0;
            while (*depth >= '0' && *depth <= '9' && d < 1000) d = d * 10 + (*depth++ - '0');
            if (d >= 1) mc_stack_depth = d;
            continue;
        }
        *w++ = *r;
    }
    if (w) *w = NULL;
    if (!path || !*path) return;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    size_t len = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 28 ? (size_t)st.st_size : 0;
    void *map = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    close(fd);
    if (map == MAP_FAILED) return;
    dl_iterate_phdr(exe_bias, &table.bias);
    if (!frames_parse(&table, map, len)) munmap(map, len); /* a table that does not add up: none */
}

/* a frame record, read so that an address the program left unmapped fails instead of faulting */
static int read_record(uint64_t w[2], uintptr_t at)
{
    struct iovec local = {w, 16}, remote = {(void *)at, 16};
    return syscall(SYS_process_vm_readv, getpid(), &local, 1UL, &remote, 1UL, 0UL) != 16;
}

/* "file:line" of an address of the executable, by the table's line rows, for a report's frames (check_stacks.c
 * asks; the agent has its own, check_locals.c); the text lives until 16 more are asked for (under its lock) */
const char *check_line_of(uintptr_t pc)
{
    static char ring[16][512];
    static unsigned next;
    return frames_line_of(&table, pc, ring[next++ % 16], sizeof ring[0]);
}

/* The program's return addresses above a report's site (check_stacks.c's frames, named by check_names.c): from
 * the frame of the function holding at (an instruction; a return address when ret) whose %rbp is rbp (0: the
 * one a wrapper's caller kept, found up the runtime's own chain), through each function the table says keeps a
 * frame pointer, up to main's, as fault mode's stack ends there; at most max, into out. */
int mc_frames_above(uintptr_t at, int ret, uintptr_t rbp, uint64_t *out, int max)
{
    if (!table.ready) return 0;
    uintptr_t low = (uintptr_t)__builtin_frame_address(0);
    if (!rbp && ret) rbp = frames_caller_rbp(low, at, read_record);
    const struct lfn *f = frames_fn_of(&table, ret ? at - 1 : at);
    int n = 0;
    while (f && !f->frame && rbp && n < max && !(rbp & 7) && rbp >= low) {
        const char *fn = frames_str(&table, f->name);
        if (fn[0] == 'm' && fn[1] == 'a' && fn[2] == 'i' && fn[3] == 'n' && !fn[4]) break;
        uint64_t w[2];
        if (read_record(w, rbp)) break;
        out[n++] = w[1];
        if (w[0] <= rbp || w[0] - rbp > (1UL << 20)) break;
        low = rbp;
        rbp = w[0];
        f = frames_fn_of(&table, w[1] - 1);
    }
    return n;
}

void mc_check_stack_var(uintptr_t p, size_t n, enum mc_access access, const void *pc, const char *by)
{
    if (!n || mc_symglobal_check(p, n, access, pc, by)) return; /* a global's range: check_symglobals.c */
    if (!table.ready) return;
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    if (p < here || p - here > (64UL << 20)) return; /* not on this thread's stack */
    /* the program's %rbp: saved by the frame whose return address is pc (the wrapper's), found upwards */
    uintptr_t rbp = frames_caller_rbp(here, (uintptr_t)pc, read_record);
    struct mc_extent x; /* every field set by frames_walk */
    if ((rbp && frames_walk(&table, p, n, (uintptr_t)pc, rbp, here, read_record, &x)) ||
        frames_rsp_caller(&table, p, n, (uintptr_t)pc, here, read_record, &x))
        mc_report_extent(p, n, access, pc, by, &x);
}

/* A _chk function's write of n bytes at d, past the dl bytes gcc knew the destination to have, that the shadow
 * finds addressable (mc_fortify_fail), in a rewrite run, where the stack has no redzones: when d is on this
 * thread's stack it is the overflow of a stack object, not of a member inside one, unless DWARF knows a
 * variable that holds all n bytes (a struct whose member gcc knew: then 0, an intra-object overflow). Reported
 * as the stack overflow of d's variable when DWARF knows it, else of the dl bytes gcc knew; 1 when reported. */
int mc_fortify_stack(uintptr_t d, size_t n, size_t dl, const void *pc, const char *by)
{
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    if (!mc_rewritten || d < here || d - here > (64UL << 20)) return 0;
    struct mc_extent x;
    __builtin_memset(&x, 0, sizeof x);
    uintptr_t rbp = table.ready ? frames_caller_rbp(here, (uintptr_t)pc, read_record) : 0;
    if (rbp && frames_walk(&table, d, n, (uintptr_t)pc, rbp, here, read_record, &x)) {
        mc_report_extent(d, n, MC_WRITE, pc, by, &x);
        return 1;
    }
    /* the range fits: in a variable (an intra-object overflow), or in none the table knows (a huge range */
    /* from d leaves the variable d is in, when there is one)                                            */
    if (rbp && frames_walk(&table, d, (size_t)1 << 40, (uintptr_t)pc, rbp, here, read_record, &x) &&
        d >= x.beg && d - x.beg < x.size)
        return 0;
    __builtin_memset(&x, 0, sizeof x);
    x.beg = d;
    x.size = dl;
    x.region = "stack";
    mc_snprintf(x.name, sizeof x.name, "<stack>");
    mc_snprintf(x.desc, sizeof x.desc, "an object of %lu bytes on the stack, the size _FORTIFY_SOURCE gave %s; no "
                "variable known there", (unsigned long)dl, by);
    mc_report_extent(d, n, MC_WRITE, pc, by, &x);
    return 1;
}

/* The name of the table's function whose code holds pc (a smashed frame's, check_shadow.c), or NULL. */
const char *mc_stackvars_function(uintptr_t pc)
{
    const struct lfn *f = frames_fn_of(&table, pc);
    return f ? frames_str(&table, f->name) : NULL;
}

/* 8 bytes at `at`, 0 when they could be read (a smashed %rsp must not fault the handler) */
int mc_read_word(uint64_t *w, uintptr_t at)
{
    struct iovec local = {w, 8}, remote = {(void *)at, 8};
    return syscall(SYS_process_vm_readv, getpid(), &local, 1UL, &remote, 1UL, 0UL) != 8;
}
