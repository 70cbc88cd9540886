/*
 * rw_dlopen.c: libraries opened by dlopen (or dlmopen, or libc's own internal dlopen of NSS and gconv
 * modules) rewritten before their code first runs, in `memtrace run --mode rewrite` (docs/rewriting.md,
 * "Libraries opened by dlopen"). Part of libmemtrace-rt.so, next to rw_apply.c.
 *
 * The hook: ld.so calls its empty function _dl_debug_state (the debugger's breakpoint, r_debug.r_brk)
 * after it has mapped every object a dlopen brings and before it relocates them and runs their
 * constructors (r_state RT_CONSISTENT), and again when a dlclose has unmapped objects. At start
 * (rw_dlopen_init, in the runtime's constructor, one thread) the runtime overwrites that function's
 * `ret` and its alignment padding (or its `endbr64; ret`) with a `jmp rel32` to a stub page near ld.so,
 * whose `jmp *` goes to rw_debug_hook, which returns to ld.so in place of the empty function. The hook
 * runs under ld.so's load lock, so dlopens of several threads are rewritten one at a time.
 *
 * On each call it walks the loaded objects (dl_iterate_phdr, its own accesses into the sink): an object
 * seen before is left alone; an object gone (dlclose) has its trampolines unmapped and is forgotten
 * (rw_forget), so a library opened later at the same address is rewritten again from its own plan; a new
 * object has its MT_MODULE reported, then its plan asked from the `memtrace run` JVM over the UNIX socket
 * MEMTRACE_REWRITE_SOCKET (one connection per object: "<build-id hex> <absolute path>\n" answered
 * "plan <path>\n" or "no <reason>\n", then the runtime's "applied\n" or "failed <reason>\n", which the
 * JVM's summary reports per module); the plan is applied (rw_apply_loaded) and its trampoline file
 * reported as a module.
 *
 * How it reads: silent when each new library is rewritten or the JVM has said why not (its summary names
 * the library and the reason); one `memtrace: rewrite:` line on stderr for a library whose plan cannot be
 * asked for (no socket: the program was not started by `memtrace run`; memtrace gone).
 *
 * What it gets wrong: when _dl_debug_state is not a bare `ret` or `endbr64; ret` (another libc), there is
 * no hook; libraries opened by the program's dlopen are then rewritten when dlopen returns, after their
 * constructors ran unrewritten (said once). The runtime's rt_scan_new_modules (its dl_iterate_phdr and
 * /proc/self/maps read) records into the calling thread's buffer, as in the dlopen wrapper. The JVM plans
 * while the program waits inside dlopen (a cold plan of a large library takes seconds). A debugger's
 * breakpoint on r_brk sees the jump.
 */
#include <elf.h>
#include <errno.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "../runtime/rt.h"

static char sock_path[sizeof ((struct sockaddr_un *)0)->sun_path];
static struct r_debug *rdebug;
static int hooked;            /* _dl_debug_state jumps to rw_debug_hook */
static int fallback_lock;     /* without the hook: the dlopen wrapper's scans, one at a time */

/* The objects loaded, by load bias and program headers (the pair is an object's while it is loaded). */
#define SEEN 2048
static struct seen {
    uint64_t bias;
    const void *phdr;
    int mark;
} seen[SEEN];
static int seen_count;

static size_t put(char *buf, size_t at, size_t cap, const char *s)
{
    while (*s && at < cap - 1) buf[at++] = *s++;
    buf[at] = 0;
    return at;
}

static void tell(const char *a, const char *b, const char *c)
{
    char msg[4600];
    size_t at = put(msg, 0, sizeof msg, "memtrace: rewrite: ");
    at = put(msg, at, sizeof msg, a);
    at = put(msg, at, sizeof msg, b);
    at = put(msg, at, sizeof msg, c);
    at = put(msg, at, sizeof msg, "\n");
    mt_sys3(SYS_write, 2, msg, at);
}

/* ---- the walk ------------------------------------------------------------------------------------ */

#define FRESH 64
struct walk {
    int fresh_count;
    struct dl_phdr_info fresh[FRESH];
    char names[FRESH][512];
};

static int same_object(const struct seen *s, const struct dl_phdr_info *info)
{
    return s->bias == info->dlpi_addr && s->phdr == (const void *)info->dlpi_phdr;
}

static int walk_one(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct walk *w = arg;
    for (int i = 0; i < seen_count; i++)
        if (same_object(&seen[i], info)) {
            seen[i].mark = 1;
            return 0;
        }
    if (w->fresh_count < FRESH) {
        int k = w->fresh_count++;
        w->fresh[k] = *info;
        /* dlpi_name lives in the link_map: kept while the object is, copied for the messages anyway */
        put(w->names[k], 0, sizeof w->names[k], info->dlpi_name ? info->dlpi_name : "");
        w->fresh[k].dlpi_name = w->names[k];
    }
    return 0;
}

static void remember(const struct dl_phdr_info *info)
{
    if (seen_count < SEEN) seen[seen_count++] = (struct seen){info->dlpi_addr, info->dlpi_phdr, 1};
}

/* Whether the object holds address a in a loadable segment. */
static int holds(const struct dl_phdr_info *info, uint64_t a)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && a >= info->dlpi_addr + ph->p_vaddr && a < info->dlpi_addr + ph->p_vaddr + ph->p_memsz) return 1;
    }
    return 0;
}

/* ---- asking memtrace for a plan ---------------------------------------------------------------- */

static int write_all(int fd, const char *s, size_t n)
{
    while (n) {
        long w = mt_sys3(SYS_write, fd, s, n);
        if (w == -EINTR) continue;
        if (w <= 0) return -1;
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

/* One line from fd into buf (without its newline); -1 when the peer closed or failed first. */
static int read_line(int fd, char *buf, size_t cap)
{
    size_t at = 0;
    while (at < cap - 1) {
        long r = mt_sys3(SYS_read, fd, buf + at, 1);
        if (r == -EINTR) continue;
        if (r <= 0) return -1;
        if (buf[at] == '\n') break;
        at++;
    }
    buf[at] = 0;
    return 0;
}

/* The object's file by an absolute path memtrace can open: relative to our cwd, /proc/self as our pid. */
static void absolute(const char *name, char *out, size_t cap)
{
    size_t at = 0;
    out[0] = 0;
    if (rt_strncmp(name, "/proc/self/", 11) == 0) {
        char pid[24];
        int n = 0;
        for (long p = mt_sys0(SYS_getpid); p; p /= 10) pid[n++] = (char)('0' + p % 10);
        at = put(out, at, cap, "/proc/");
        while (n) { char d[2] = {pid[--n], 0}; at = put(out, at, cap, d); }
        put(out, at, cap, name + 10);
        return;
    }
    while (name[0] == '.' && name[1] == '/') name += 2; /* dlopen("./lib.so") */
    if (name[0] != '/') {
        long n = mt_sys2(SYS_getcwd, out, cap - 2);
        if (n > 0) {
            at = mt_strlen(out);
            at = put(out, at, cap, "/");
        }
    }
    put(out, at, cap, name);
}

/* The new object asked for, applied and its answer told; 1 when it was rewritten. */
static int rewrite_new(const struct dl_phdr_info *o)
{
    char path[4200], line[4400];
    absolute(o->dlpi_name, path, sizeof path);
    if (!sock_path[0]) {
        tell(path, " was opened by dlopen and has no plan (only `memtrace run --mode rewrite` plans libraries opened later)", "; it runs unrewritten");
        return 0;
    }
    uint32_t id_len = 0;
    const unsigned char *id = mt_build_id(o, &id_len);
    size_t at = 0;
    static const char hex[] = "0123456789abcdef";
    for (uint32_t i = 0; id && i < id_len && at < 200; i++) {
        line[at++] = hex[id[i] >> 4];
        line[at++] = hex[id[i] & 15];
    }
    if (!at) line[at++] = '-';
    line[at] = 0;
    at = put(line, at, sizeof line, " ");
    at = put(line, at, sizeof line, path);
    at = put(line, at, sizeof line, "\n");
    int fd = (int)mt_sys3(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa;
    mt_memzero(&sa, sizeof sa);
    sa.sun_family = AF_UNIX;
    put(sa.sun_path, 0, sizeof sa.sun_path, sock_path);
    long c = fd < 0 ? -1 : mt_sys3(SYS_connect, fd, &sa, sizeof sa);
    while (c == -EINTR) c = mt_sys3(SYS_connect, fd, &sa, sizeof sa);
    if (c != 0 || write_all(fd, line, at) != 0 || read_line(fd, line, sizeof line) != 0) {
        if (fd >= 0) mt_sys1(SYS_close, fd);
        tell(path, " was opened by dlopen and memtrace cannot be asked for its plan", "; it runs unrewritten");
        return 0;
    }
    int done = 0;
    if (rt_strncmp(line, "plan ", 5) == 0) {
        const char *why = rw_apply_loaded(line + 5, o);
        if (!why) {
            write_all(fd, "applied\n", 8);
            done = 1;
        } else {
            at = put(line, 0, sizeof line, "failed ");
            at = put(line, at, sizeof line, why);
            at = put(line, at, sizeof line, "\n");
            write_all(fd, line, at);
        }
    } /* "no <reason>": memtrace's summary names the library and the reason */
    mt_sys1(SYS_close, fd);
    return done;
}

/* ---- the scan ------------------------------------------------------------------------------------ */

/* One pass: objects gone forgotten (their trampolines unmapped); up to FRESH new objects reported, asked */
/* for and rewritten. Returns whether there may be more new objects than this pass took.                   */
static int scan_once(void)
{
    int was = rt_self.internal;
    static struct walk w; /* under ld.so's load lock (or fallback_lock): one scan at a time */
    w.fresh_count = 0;
    for (int i = 0; i < seen_count; i++) seen[i].mark = 0;
    rt_self.internal = 1;
    char *saved = rw_sink_enter();
    dl_iterate_phdr(walk_one, &w);
    rw_sink_leave(saved);
    int removed = 0;
    for (int i = 0; i < seen_count;) {
        if (seen[i].mark) { i++; continue; }
        rw_forget(seen[i].bias);
        seen[i] = seen[--seen_count];
        removed = 1;
    }
    rt_self.internal = was;
    if (removed) rt_modules_resync();
    if (!w.fresh_count) return 0;
    /* the library's MT_MODULE before its trampoline file's: the reader places the sites at its bias */
    rt_scan_new_modules();
    uint64_t brk = rdebug ? (uint64_t)rdebug->r_brk : 0, self = (uint64_t)(uintptr_t)scan_once;
    for (int k = 0; k < w.fresh_count; k++) {
        const struct dl_phdr_info *o = &w.fresh[k];
        remember(o);
        /* the vdso and the main program have no file name; ld.so and the runtime are never rewritten */
        if (!o->dlpi_name || !o->dlpi_name[0] || holds(o, brk) || holds(o, self)) continue;
        rt_self.internal = 1;
        saved = rw_sink_enter();
        int done = rewrite_new(o);
        rw_sink_leave(saved);
        rt_self.internal = was;
        if (done) rw_report_last();
    }
    return w.fresh_count == FRESH;
}

static void scan(void)
{
    while (scan_once()) {
    }
}

/* In place of ld.so's _dl_debug_state: returns to its caller. */
__attribute__((used)) void rw_debug_hook(void)
{
    if (rdebug && rdebug->r_state == RT_CONSISTENT) scan();
}

/* After the program's dlopen returned: only when there is no hook (the library's constructors ran unrewritten). */
void rw_dlopen_returned(void)
{
    if (hooked || !rdebug) return;
    while (__atomic_exchange_n(&fallback_lock, 1, __ATOMIC_ACQUIRE)) mt_sys0(SYS_sched_yield);
    scan();
    __atomic_store_n(&fallback_lock, 0, __ATOMIC_RELEASE);
}

/* ---- the hook's installation ---------------------------------------------------------------------- */

struct find_brk {
    uint64_t brk;
    struct dl_phdr_info info;
    int found;
};

static int find_loader(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct find_brk *f = arg;
    remember(info); /* everything loaded at start is the start-up plans' business */
    if (!f->found && holds(info, f->brk)) {
        f->info = *info;
        f->found = 1;
    }
    return 0;
}

/* Whether the bytes after _dl_debug_state's `ret` up to its 16-byte boundary are padding (nops, int3). */
static int padding(const unsigned char *p, int n)
{
    for (int i = 0; i < n; i++)
        switch (p[i]) {
        case 0x66: case 0x2e: case 0x0f: case 0x1f: case 0x84: case 0x80: case 0x44: case 0x40: case 0x00: case 0x90: case 0xcc:
            break;
        default:
            return 0;
        }
    return 1;
}

void rw_dlopen_init(const char *socket)
{
    if (socket) put(sock_path, 0, sizeof sock_path, socket);
    rdebug = dlsym(RTLD_DEFAULT, "_r_debug");
    struct find_brk f = {rdebug ? (uint64_t)rdebug->r_brk : 0, {0}, 0};
    dl_iterate_phdr(find_loader, &f);
    if (!f.found) return;
    const unsigned char *b = (const unsigned char *)f.brk;
    int endbr = b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa && b[4] == 0xc3;
    int bare = b[0] == 0xc3 && (f.brk & 15) <= 11 && padding(b + 1, 4);
    if (!endbr && !bare) {
        tell("ld.so's _dl_debug_state is not the empty function memtrace knows", "", "; libraries opened by dlopen are rewritten after their constructors");
        return;
    }
    uint64_t page = (uint64_t)rt.page, lo = ~0ULL, hi = 0;
    for (int i = 0; i < f.info.dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &f.info.dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        if (f.info.dlpi_addr + ph->p_vaddr < lo) lo = f.info.dlpi_addr + ph->p_vaddr;
        if (f.info.dlpi_addr + ph->p_vaddr + ph->p_memsz > hi) hi = f.info.dlpi_addr + ph->p_vaddr + ph->p_memsz;
    }
    uint64_t stub = rw_place(0, page, lo, hi);
    if (!stub) {
        tell("no room for a stub near ld.so", "", "; libraries opened by dlopen are rewritten after their constructors");
        return;
    }
    unsigned char *s = (unsigned char *)stub;
    static const unsigned char jmp_indirect[6] = {0xff, 0x25, 0, 0, 0, 0}; /* jmp *0(%rip) */
    rt_memcpy(s, jmp_indirect, 6);
    uint64_t target = (uint64_t)(uintptr_t)rw_debug_hook;
    rt_memcpy(s + 6, &target, 8);
    uint64_t from = f.brk & ~(page - 1), to = (f.brk + 5 + page - 1) & ~(page - 1);
    if (mt_sys3(SYS_mprotect, stub, page, PROT_READ | PROT_EXEC) != 0
        || mt_sys3(SYS_mprotect, from, to - from, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
        mt_sys2(SYS_munmap, stub, page);
        tell("cannot write ld.so's _dl_debug_state", "", "; libraries opened by dlopen are rewritten after their constructors");
        return;
    }
    unsigned char jump[5] = {0xe9};
    int32_t rel = (int32_t)((int64_t)stub - (int64_t)(f.brk + 5));
    rt_memcpy(jump + 1, &rel, 4);
    rt_memcpy((void *)f.brk, jump, 5);
    mt_sys3(SYS_mprotect, from, to - from, PROT_READ | PROT_EXEC);
    hooked = 1;
}
