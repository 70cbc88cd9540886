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
 * the range must stay inside the variable it belongs to. Reported as fault mode reports it:
 *   memtrace: stack overflow: <stack:buf@run>+24 (a variable of 24 bytes, declared at line 7 of run) written
 *   40 bytes by memset, 0 bytes past its end, at plain-O0-s_memset_sizeof+4534, thread 8104
 *
 * What it gets wrong: as fault mode, only the executable's frames that keep a frame pointer (gcc -O0, or
 * -fno-omit-frame-pointer) and their DW_OP_fbreg variables; allocas and VLAs are not checked; a frame's
 * variables are all taken as live. The input functions' ranges are checked after the call (the bytes
 * they wrote), so their overflow has happened when it is reported, as in fault mode.
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

static int exe_bias(struct dl_phdr_info *info, size_t size, void *arg)
{
    *(uintptr_t *)arg = info->dlpi_addr;
    return 1; /* the first is the executable */
}

/* by hand: this runs before the wrappers know libc's functions */
static int is_frames(const char *e)
{
    const char *k = "MEMTRACE_CHECK_FRAMES=";
    while (*k && *e == *k) e++, k++;
    return !*k;
}

/* MEMTRACE_CHECK_FRAMES's table, and the variable out of the environment: the program and what it execs see */
/* the environment they would see untraced.                                                                  */
void mc_stackvars_init(void)
{
    extern char **environ;
    const char *path = NULL;
    char **w = environ;
    for (char **r = environ; r && *r; r++) {
        if (is_frames(*r)) { path = *r + 22; continue; }
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

void mc_check_stack_var(uintptr_t p, size_t n, enum mc_access access, const void *pc, const char *by)
{
    if (!table.ready || !n) return;
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    if (p < here || p - here > (64UL << 20)) return; /* not on this thread's stack */
    /* the program's %rbp: saved by the frame whose return address is pc (the wrapper's), found upwards */
    uintptr_t rbp = frames_caller_rbp(here, (uintptr_t)pc, read_record);
    struct mc_extent x; /* every field set by frames_walk */
    if (rbp && frames_walk(&table, p, n, (uintptr_t)pc, rbp, here, read_record, &x)) mc_report_extent(p, n, access, pc, by, &x);
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
