/*
 * rw_apply.c: `memtrace run --mode rewrite` inside the traced process (docs/rewriting.md). Part of
 * libmemtrace-rt.so, which memtrace preloads in that mode. At start, in the runtime's constructor and so
 * before any code of the executable runs and while the process has one thread, it reads the plan file
 * named by MEMTRACE_REWRITE_PLAN (written by org.memtrace.rewrite in memtrace's own cache directory),
 * maps the plan's trampolines at the executable's load bias plus their link-time address, fills their
 * cursor slot with the offset of __memtrace_cursor from the thread pointer, and writes each planned
 * `jmp rel32` over the first five bytes of its instruction. The trampolines record through the runtime
 * exactly as compiled-in probes do (they are its GOT-form group probes), so the .mtr file is the same
 * kind of file; rw_report adds an MT_MODULE for the trampoline file at the executable's load bias, through
 * which the reader finds the site table that names the executable's instructions.
 *
 * It takes MEMTRACE_REWRITE_PLAN out of the environment and puts LD_PRELOAD back to the user's value
 * (MEMTRACE_LD_PRELOAD, which memtrace passes; none when absent), so exec'd descendants run untraced.
 *
 * How it reads: silent when it applied the plan or when the plan is for another program (a child that
 * exec'd something else and kept LD_PRELOAD itself); one `memtrace: rewrite:` line on stderr when the plan
 * is the executable's but cannot be applied (nothing is patched then, and the trace holds no records).
 *
 * What it gets wrong: only the main executable is rewritten (libraries, ld.so and dlopen'd code are not
 * yet); code that reads its own text sees the jumps; a fault of the moved instruction reports a pc inside
 * the trampoline to the program's handler; a page that a code segment shares with another segment gets
 * the code segment's protection back after patching; code in the executable's preinit_array runs before
 * this and unrewritten. If the trampolines' place (just below the executable) is taken, nothing is patched.
 */
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
#define RW_HEADER 96
#define RW_PATCH 24

struct rw_header {
    uint64_t magic;
    uint32_t version, patches;
    uint64_t text_address, text_size, cursor_slot;
    uint32_t module_id_len, tramp_id_len, tramp_path_len, reasons;
    uint32_t left[8];
    uint32_t rewritten, reserved;
};
_Static_assert(sizeof(struct rw_header) == RW_HEADER, "plan header");

struct rw_patch {
    uint64_t address;
    unsigned char old[8], jump[8];
};
_Static_assert(sizeof(struct rw_patch) == RW_PATCH, "plan patch");

static struct {
    int applied;
    uint64_t bias;
    unsigned char id[64];
    uint32_t id_len;
    char path[1024];
    uint32_t path_len;
} rw;

static void say(const char *what, const char *detail)
{
    char msg[1400];
    size_t at = 0;
    const char *parts[] = {"memtrace: rewrite: ", what, detail, "; the program runs unrewritten\n"};
    for (int i = 0; i < 4; i++)
        for (const char *p = parts[i]; *p && at < sizeof msg - 1; p++) msg[at++] = *p;
    mt_sys3(SYS_write, 2, msg, at);
}

static int first_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    *(struct dl_phdr_info *)arg = *info;
    return 1;
}

static uint64_t pad8(uint64_t n) { return (n + 7) & ~7ULL; }

static int same(const unsigned char *a, const unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

/* The plan file's bytes in private pages (NULL when it cannot be trusted or read); *len its size. */
static unsigned char *read_plan(const char *path, size_t *len)
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
    unsigned char *buf = rt_map(n);
    size_t got = 0;
    for (long r; buf && got < n && (r = mt_sys3(SYS_read, fd, buf + got, n - got)) > 0;) got += (size_t)r;
    mt_sys1(SYS_close, fd);
    if (!buf || got != n) { say("cannot read the plan ", path); return NULL; }
    *len = n;
    return buf;
}

/* The executable segment of the main program that holds [a, a+5), or NULL. */
static const ElfW(Phdr) *code_segment(const struct dl_phdr_info *exe, uint64_t a)
{
    for (int i = 0; i < exe->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &exe->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && a >= ph->p_vaddr && a + 5 <= ph->p_vaddr + ph->p_filesz) return ph;
    }
    return NULL;
}

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
        if (rt_strncmp(*r, "MEMTRACE_REWRITE_PLAN=", 22) == 0 || rt_strncmp(*r, "MEMTRACE_LD_PRELOAD=", 20) == 0) continue;
        if (rt_strncmp(*r, "LD_PRELOAD=", 11) == 0) {
            if (!keep) continue;
            *w++ = preload;
            continue;
        }
        *w++ = *r;
    }
    if (w) *w = NULL;
}

void rw_apply(void)
{
    const char *path = getenv("MEMTRACE_REWRITE_PLAN");
    if (!path || !*path) return;
    char plan_path[4096];
    size_t n = 0;
    for (; path[n] && n < sizeof plan_path - 1; n++) plan_path[n] = path[n];
    plan_path[n] = 0;
    restore_environment();
    path = plan_path;
    size_t len;
    unsigned char *plan = read_plan(path, &len);
    if (!plan) return;
    const struct rw_header *h = (const void *)plan;
    uint64_t ids = pad8((uint64_t)h->module_id_len + h->tramp_id_len + h->tramp_path_len);
    uint64_t text_at = RW_HEADER + ids, patches_at = text_at + pad8(h->text_size);
    if (h->magic != RW_MAGIC || h->version != 1 || h->tramp_id_len > sizeof rw.id || h->tramp_path_len >= sizeof rw.path
        || h->module_id_len > 64 || h->text_size > len || patches_at + (uint64_t)h->patches * RW_PATCH != len) {
        say("the plan is damaged or of another version: ", path);
        goto done;
    }
    struct dl_phdr_info exe;
    dl_iterate_phdr(first_object, &exe);
    uint32_t id_len;
    const unsigned char *id = mt_build_id(&exe, &id_len);
    /* another program (an exec'd child inherits the environment): not ours to rewrite, and not an error */
    if (h->module_id_len && (id_len != h->module_id_len || !same(id, plan + RW_HEADER, id_len))) goto done;
    const struct rw_patch *p = (const void *)(plan + patches_at);
    for (uint32_t i = 0; i < h->patches; i++)
        if (!code_segment(&exe, p[i].address) || !same((const void *)(exe.dlpi_addr + p[i].address), p[i].old, 5)) {
            if (!h->module_id_len) goto done; /* without build-ids, differing bytes are another program */
            say("the executable's code differs from its plan at an instruction: ", path);
            goto done;
        }
    uint64_t page = (uint64_t)rt.page, bias = exe.dlpi_addr;
    uint64_t at = bias + h->text_address, size = (h->text_size + page - 1) & ~(page - 1);
    long m = mt_sys6(SYS_mmap, at, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (m != (long)at) {
        if (m > 0) mt_sys2(SYS_munmap, m, size);
        say("the trampolines' place below the executable is taken: ", path);
        goto done;
    }
    rt_memcpy((void *)at, plan + text_at, h->text_size);
    /* initial-exec TLS: the cursor's offset from the thread pointer is the same in every thread */
    uint64_t tp;
    __asm__("mov %%fs:0, %0" : "=r"(tp));
    *(uint64_t *)(bias + h->cursor_slot) = (uint64_t)(uintptr_t)&__memtrace_cursor - tp;
    if (mt_sys3(SYS_mprotect, at, size, PROT_READ | PROT_EXEC) != 0) {
        mt_sys2(SYS_munmap, at, size);
        say("cannot make the trampolines executable: ", path);
        goto done;
    }
    for (int s = 0; s < exe.dlpi_phnum; s++) {
        const ElfW(Phdr) *ph = &exe.dlpi_phdr[s];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        uint64_t from = (bias + ph->p_vaddr) & ~(page - 1), to = (bias + ph->p_vaddr + ph->p_memsz + page - 1) & ~(page - 1);
        if (mt_sys3(SYS_mprotect, from, to - from, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
            say("cannot write the executable's code (mprotect refused): ", path);
            goto done; /* segments patched before stay patched: their trampolines are mapped */
        }
        for (uint32_t i = 0; i < h->patches; i++)
            if (code_segment(&exe, p[i].address) == ph) rt_memcpy((void *)(bias + p[i].address), p[i].jump, 5);
        mt_sys3(SYS_mprotect, from, to - from, prot_of(ph->p_flags));
    }
    rw.applied = 1;
    rw.bias = bias;
    rw.id_len = h->tramp_id_len;
    rt_memcpy(rw.id, plan + RW_HEADER + h->module_id_len, h->tramp_id_len);
    rw.path_len = h->tramp_path_len;
    rt_memcpy(rw.path, plan + RW_HEADER + h->module_id_len + h->tramp_id_len, h->tramp_path_len);
done:
    mt_sys2(SYS_munmap, plan, len);
}

void rw_report(void)
{
    if (rw.applied) rt_report_module(rw.bias, rw.id, rw.id_len, rw.path, rw.path_len);
}
