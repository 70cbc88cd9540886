/*
 * rt_init.c: the life of a process linked with libmemtrace-rt.so, as the .mtr file tells it.
 *
 * Start (a constructor, run before every other: -z initfirst, see rt_init):
 * MT_HELLO, MT_THREAD start of the main thread, one MT_MODULE per loaded object (load bias, GNU build-id,
 * path) and one MT_MAPPING per /proc/self/maps line, then MT_CONTROL start unless MEMTRACE_AUTOSTART=0.
 * memtrace_start()/memtrace_stop() (and MadT__start/MadT__stop) record MT_CONTROL with their caller.
 *
 * The end: exit (a destructor; the status comes from main's return or exit()), _exit and _Exit record
 * MT_EXIT normal and write the rest (rt_finish). execve and the other exec functions record MT_EXIT exec
 * with the path and close the file with its end record first; if the exec fails, the end record is cut
 * off again and tracing goes on. fork: the parent records MT_FORK; the child (its forking thread alone)
 * starts `<file>.<child pid>` with its own header, hello, modules and mappings; so does the child of a
 * clone without CLONE_VM (rt_clone_process), before its function, whose return is its exit. Processes started later by
 * this one (exec, system, posix_spawn) see MEMTRACE_OUT=<file>.%p, so an instrumented descendant writes
 * `<file>.<its pid>` instead of overwriting this trace. Started by `memtrace run` (MEMTRACE_PARENT=<its
 * pid>), the process dies with memtrace, gets the descriptors memtrace was started with on their numbers
 * before the trace takes one (common/mt_fds.c), and the variables memtrace set are taken out of the environment
 * before main: the program sees what it would see untraced, and its descendants run untraced. Threads made by pthread_create record MT_THREAD
 * start with their creator's tid as soon as they run; others on their first probe or event (parent 0).
 * A thread's end (its pthread key destructor) records MT_THREAD exit and hands its buffer to the writer.
 *
 * What it gets wrong: without rewrite plans vfork runs as fork (the child's trace starts like a fork
 * child's, and its stores are not its parent's); with them it is a vfork, its child untraced. Records of
 * probes in objects initialized before this library (another -z initfirst object, which ld.so would run
 * first) cannot be taken: the first such probe finds no SIGSEGV handler and kills the program.
 * Modules unloaded by dlclose stay reported; the count of reported objects is taken again after a dlclose
 * (rt_modules_resync), so one loaded after it is reported (an object unloaded from the middle of the list
 * while another is appended by the same call may still be missed).
 */
#include <dlfcn.h>
#include <errno.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rt.h"

static char out_path[4096];             /* this process's trace */
static char child_env[4096 + 32];       /* MEMTRACE_OUT=<out_path>.%p, for descendants */
static int reported_modules;
static int exit_status;
static int by_memtrace;                 /* started by `memtrace run` (MEMTRACE_PARENT), not by the user */

/* ---- start-up reports ----------------------------------------------------------------------------- */

/* One MT_MODULE: a loaded object, or the trampoline file of a rewritten one (agent/rewrite/rw_apply.c). */
void rt_report_module(uint64_t bias, const unsigned char *bid, uint32_t bid_len, const char *name, size_t n)
{
    struct mt_module_rec r;
    size_t size = mt_module_record(&r, bias, bid, bid_len, name, n);
    r.m.h.tid = (uint32_t)rt_tid();
    rt_emit(&r, size);
}

static void report_module(const struct mt_module_info *m, void *arg)
{
    (void)arg;
    rt_report_module(m->bias, m->build_id, m->build_id_len, m->name, m->name_len);
}

/* ---- the runtime's own mappings ------------------------------------------------------------------ */
/* Where they lie: every page the runtime maps (rt_map, rt_map_own, mt_map_pages: the writer's buffers as  */
/* the pool grows, codec tables, zstd contexts, its thread's stack, the unwind tables built from each      */
/* module's .eh_frame, the maps reader's buffer, rewrite mode's tables, short-lived ones too) is taken one */
/* after the other from a region of its own at OWN_BASE (100 TB), MAP_FIXED_NOREPLACE. Placed by the kernel */
/* (the highest gap below the program's last mapping) each one moved every later mapping of the program    */
/* by its size: a --skeleton build's unwind tables are smaller than its full twin's (zstd's I/O threads'   */
/* stacks 40 KB apart), and the buffers the pool had grown to when a thread was made depend on how far the  */
/* writer was behind (zstd's third thread's stack moved 1 MB from run to run); a short-lived mapping made   */
/* while another thread maps leaves a hole there. The region is clear of everything else memtrace places:  */
/* rewrite mode's trampoline texts and stub pages lie within 2 GB of their modules (rw_place), which are    */
/* at 4 MB (non-PIE), at 85 TB (PIE) or under the stack (libraries, from 112 TB up with the largest          */
/* randomization); its stub file's view is hinted at 88 TB and its sink at 96 TB (+256 MB); --check's      */
/* shadow ends at 16 TB and the fault-mode agent's heap lies at 32 TB. A place in the region that the      */
/* program holds (EEXIST) is stepped over by 1 GB (that mapping of the program's is then left out of the    */
/* MT_MAPPING records with the region); past OWN_ROOM, or where the kernel cannot place it there (before    */
/* Linux 4.17 the flag is a hint), a mapping goes where the kernel puts it, as before.                      */
#define OWN_BASE 0x640000000000ULL
#define OWN_ROOM (1ULL << 40)
static uintptr_t own_next = OWN_BASE;

static void *own_pages(size_t n)
{
    n = (n + 4095) & ~(size_t)4095;
    for (int tries = 0; tries < 8; tries++) {
        uintptr_t at = __atomic_fetch_add(&own_next, n, __ATOMIC_RELAXED);
        if (at + n > OWN_BASE + OWN_ROOM) break;
        long p = mt_sys6(SYS_mmap, (long)at, (long)n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        if (p == (long)at) {
            mt_own_add((void *)p, n);
            return (void *)p;
        }
        if (!mt_failed(p)) { /* taken as a hint: placed elsewhere */
            mt_sys2(SYS_munmap, p, (long)n);
            break;
        }
        if (p != -EEXIST) break;
        __atomic_fetch_add(&own_next, 1ULL << 30, __ATOMIC_RELAXED);
    }
    return mt_map_pages_anywhere(n);
}

/* Whether p lies in the region (its pages are left out of the MT_MAPPING records as one range). */
static int in_region(uintptr_t p) { return p >= OWN_BASE && p < __atomic_load_n(&own_next, __ATOMIC_RELAXED); }

/* The writer's buffers, codec tables, zstd contexts, its thread's stack and the maps reader's buffer are */
/* the runtime's, not the program's: they differ with the codec and the buffer size, and a summary's      */
/* "memory regions" must not. The region's pages are left out of the MT_MAPPING records as a whole; one   */
/* the kernel placed instead is listed here as it is mapped (adjacent ones merged) and left out too. Past  */
/* OWN_MAX separate ranges such a mapping is not listed and is reported as the program's would be.        */
#define OWN_MAX 64
struct own_range {
    uintptr_t start, end;
};
static struct own_range own[OWN_MAX];
static int nown;
static rt_lock own_lock;

void *rt_map_own(size_t n)
{
    void *p = rt_map(n);
    if (!p || in_region((uintptr_t)p)) return p;
    uintptr_t s = (uintptr_t)p, e = s + ((n + 4095) & ~(size_t)4095);
    rt_lock_take(&own_lock);
    int i = 0;
    while (i < nown && own[i].end != s && own[i].start != e) i++;
    if (i < nown && own[i].end == s) own[i].end = e;
    else if (i < nown) own[i].start = s;
    else if (nown < OWN_MAX) own[nown++] = (struct own_range){s, e};
    rt_lock_drop(&own_lock);
    return p;
}

void rt_own_fork_child(void) { own_lock.owner = 0; }

/* One MT_MAPPING per /proc/self/maps line (common/mt_proc.c reads them), less the runtime's own ranges  */
/* and rewrite mode's stub pages:                                                                         */
/* an anonymous line they cover in part is reported as the pieces they leave (arg: the list's copy).    */
struct own_list {
    int n;
    struct own_range r[OWN_MAX + 1]; /* and the region */
};

static void report_mapping(const struct mt_map_line *line, void *arg)
{
    static const char stubs[] = "/memfd:" RW_STUBS_NAME;
    /* rewrite mode's stub pages (rw_apply.c), a line each: the runtime's too, thousands of them */
    if (line->path_len >= sizeof stubs - 1 && rt_strncmp(line->path, stubs, sizeof stubs - 1) == 0) return;
    const struct own_list *l = arg;
    struct mt_map_line piece = *line;
    uintptr_t at = line->start;
    while (at < line->end) {
        uintptr_t to = line->end, next = line->end; /* [at, to) is the program's; the next piece from `next` */
        if (!line->path_len)
            for (int i = 0; i < l->n; i++) {
                if (l->r[i].end <= at || l->r[i].start >= to) continue;
                if (l->r[i].start <= at) { /* a range covers `at`: the piece starts after it */
                    to = at;
                    next = l->r[i].end;
                    break;
                }
                to = l->r[i].start;
                next = l->r[i].end;
            }
        if (to > at) {
            piece.start = at;
            piece.end = to;
            struct mt_mapping_rec r;
            size_t size = mt_mapping_record(&r, &piece, 0);
            r.m.h.tid = (uint32_t)rt_tid();
            rt_emit(&r, size);
        }
        at = next;
    }
}

static int count_one(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)info;
    (void)size;
    ++*(int *)arg;
    return 0;
}

/* After a dlclose: the objects counted again, so the next one loaded (appended) is reported as new. */
void rt_modules_resync(void)
{
    int n = 0;
    char *saved = rw_sink_enter(); /* the runtime's walk in rewritten libc: not the program's accesses */
    dl_iterate_phdr(count_one, &n);
    rw_sink_leave(saved);
    if (n < reported_modules) reported_modules = n;
}

/* The maps reader's buffer, the runtime's own too (a fresh one would be a line of the maps it reads). */
#define MAPS_CAP ((size_t)1 << 20)
static char *maps_buf;
static rt_lock maps_lock;

void rt_scan_new_modules(void)
{
    mt_modules_new(&reported_modules, report_module, NULL);
    rt_lock_take(&maps_lock);
    if (!maps_buf) maps_buf = rt_map_own(MAPS_CAP);
    struct own_list l;
    rt_lock_take(&own_lock);
    l.n = nown;
    for (int i = 0; i < nown; i++) l.r[i] = own[i];
    rt_lock_drop(&own_lock);
    l.r[l.n++] = (struct own_range){OWN_BASE, __atomic_load_n(&own_next, __ATOMIC_RELAXED)};
    if (maps_buf) mt_maps_each_in(maps_buf, MAPS_CAP, report_mapping, &l);
    else mt_maps_each(report_mapping, &l);
    rt_lock_drop(&maps_lock);
}

void rt_report_process(uint64_t parent)
{
    rt_thread_begin(parent, 0);
    RT_REC(MT_HELLO, struct mt_hello, h);
    h.pid = (uint64_t)rt.pid;
    h.page_size = (uint64_t)rt.page;
    h.agent_text_start = rt.text_start;
    h.agent_text_end = rt.text_end;
    /* whether accesses get stacks: a cc build's probes (rt_ccarm.c) or rewrite mode's trampolines (rw_apply.c) */
    int armed = rt.ccarm || (rw_planned() && rt.access_stacks && rt.stack_depth > 1);
    h.h.flags = MT_HELLO_ARMING_SAID | (armed ? MT_HELLO_ARMED : 0);
    rt_emit(&h, sizeof h);
    RT_REC(MT_THREAD, struct mt_thread, t);
    t.h.flags = MT_THREAD_START;
    t.value = parent;
    rt_emit(&t, sizeof t);
    reported_modules = 0;
    rt_scan_new_modules();
    rw_report();
}

/* ---- recording on and off ------------------------------------------------------------------------- */

static void control(int start, uint64_t caller)
{
    if (rt.state != RT_RUNNING || start == rt.recording) return;
    RT_REC(MT_CONTROL, struct mt_control, c);
    c.h.flags = start ? MT_CTL_START : MT_CTL_STOP;
    c.caller = caller;
    if (start) {
        rt_discard_access_slots(1); /* what the probes wrote while stopped */
        rt.recording = 1;
        rt_emit(&c, sizeof c);
    } else {
        rt_emit(&c, sizeof c);
        rt_flush_current(); /* written whole: the recording was on */
        rt.recording = 0;
    }
}

RT_EXPORT void memtrace_start(void) { control(1, RT_CALLER); }
RT_EXPORT void memtrace_stop(void) { control(0, RT_CALLER); }
RT_EXPORT void MadT__start(void) { control(1, RT_CALLER); }
RT_EXPORT void MadT__stop(void) { control(0, RT_CALLER); }

/* ---- start and end -------------------------------------------------------------------------------- */

static size_t append(char *dst, size_t at, size_t cap, const char *s)
{
    while (*s && at + 1 < cap) dst[at++] = *s++;
    dst[at] = 0;
    return at;
}

static size_t append_number(char *dst, size_t at, size_t cap, long v)
{
    char digits[24];
    int n = 0;
    do { digits[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    while (n && at + 1 < cap) dst[at++] = digits[--n];
    dst[at] = 0;
    return at;
}

/* `%p` in MEMTRACE_OUT stands for the process id; a relative path is made absolute now, so that a fork */
/* child's or a descendant's file lands next to this one even after a chdir.                           */
static void resolve_path(char *dst, size_t cap, const char *templ, int pid)
{
    size_t at = 0;
    dst[0] = 0;
    if (templ[0] != '/' && mt_sys2(SYS_getcwd, dst, cap - 2) > 0) {
        at = rt_strlen(dst);
        if (at && dst[at - 1] != '/') at = append(dst, at, cap, "/");
    }
    for (const char *p = templ; *p && at + 1 < cap; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            at = append_number(dst, at, cap, pid);
            p++;
        } else {
            dst[at++] = *p;
            dst[at] = 0;
        }
    }
}

/* A trace that is not a regular file (/dev/null) has no `<file>.%p` beside it: descendants run untraced. */
static void set_descendants_env(void)
{
    extern char **environ;
    if (rt_file_not_regular) {
        char **w = environ;
        for (char **r = environ; r && *r; r++)
            if (rt_strncmp(*r, "MEMTRACE_OUT=", 13) != 0) *w++ = *r;
        if (w) *w = NULL;
        return;
    }
    size_t at = append(child_env, 0, sizeof child_env, "MEMTRACE_OUT=");
    at = append(child_env, at, sizeof child_env, out_path);
    append(child_env, at, sizeof child_env, ".%p");
    for (char **v = environ; v && *v; v++)
        if (rt_strncmp(*v, "MEMTRACE_OUT=", 13) == 0) *v = child_env;
}

/* Started by `memtrace run`: die with memtrace (PR_SET_PDEATHSIG survives the exec that made this the */
/* program; the check closes the race with a memtrace that died before it was set), and take the     */
/* variables memtrace set out of the environment before main, so the program and what it execs see    */
/* what they would see untraced (a descendant is not part of the run's trace).                        */
static void adopt_memtrace(const char *parent)
{
    by_memtrace = 1;
    mt_sys2(SYS_prctl, 1 /* PR_SET_PDEATHSIG */, SIGKILL);
    if (mt_sys0(SYS_getppid) != mt_parse_long(parent, 0)) mt_sys2(SYS_kill, mt_sys0(SYS_getpid), SIGKILL);
    extern char **environ;
    char **w = environ;
    for (char **r = environ; r && *r; r++)
        if (rt_strncmp(*r, "MEMTRACE_OUT=", 13) != 0 && rt_strncmp(*r, "MEMTRACE_AUTOSTART=", 19) != 0
            && rt_strncmp(*r, "MEMTRACE_PARENT=", 16) != 0 && rt_strncmp(*r, "MEMTRACE_ACCESS_STACKS=", 23) != 0
            && rt_strncmp(*r, "MEMTRACE_STACK_DEPTH=", 21) != 0 && rt_strncmp(*r, "MEMTRACE_FDS=", 13) != 0)
            *w++ = *r;
    if (w) *w = NULL;
}

extern char **environ;

/* libmemtrace-check.so's shadow set-up, when run --check --mode rewrite preloads it beside this runtime */
extern void __memtrace_check_init(void) __attribute__((weak));

/* Linked -z initfirst (DF_1_INITFIRST): ld.so runs this before every other constructor, libc's and those of */
/* the libraries the program is linked with (a preloaded library would otherwise come after them), so no   */
/* library code runs rewritten-to-be and no thread a constructor starts exists while the plans are applied. */
/* libc's own initializer (_init_first, which sets environ) has not run yet: environ is taken from the      */
/* arguments ld.so passes every initializer (the same array libc will set).                                 */
__attribute__((constructor(101))) static void rt_init(int argc, char **argv, char **envp)
{
    (void)argc, (void)argv;
    if (!environ && envp) environ = envp;
    rt.page = sysconf(_SC_PAGESIZE);
    rt.pid = (int)mt_sys0(SYS_getpid);
    mt_pages_from = own_pages;  /* before anything is mapped: the runtime's pages in a region of their own */
    mt_unwind_pages = rt_map_own; /* the stacks' unwind tables are the runtime's, not the program's mappings */
    rt_wrappers_init();
    mt_own_text((const void *)(uintptr_t)rt_init, &rt.text_start, &rt.text_end, NULL, 0);
    long kb = mt_parse_long(getenv("MEMTRACE_BUFFER_KB"), 1024);
    if (kb < 8) kb = 8;
    if (kb > 1024 * 1024) kb = 1024 * 1024;
    rt.buf_size = ((size_t)kb * 1024 + (size_t)rt.page - 1) & ~(size_t)(rt.page - 1);
    rt_buffer_init();
    const char *out = getenv("MEMTRACE_OUT");
    int autostart = mt_parse_long(getenv("MEMTRACE_AUTOSTART"), 1) != 0;
    rt.stack_depth = (int)mt_parse_long(getenv("MEMTRACE_STACK_DEPTH"), MT_STACK_DEPTH_DEFAULT);
    /* rewrite mode's access stacks cost a trap per trampoline entered and its pages copied: opt-in */
    rt.access_stacks = mt_parse_long(getenv("MEMTRACE_ACCESS_STACKS"), 0) == 1;
    const char *parent = getenv("MEMTRACE_PARENT");
    /* a recording run's `memtrace cc` probes armed for access stacks (rt_ccarm.c) when asked, as rewrite mode's */
    /* trampolines: SIGTRAP kept for them. Opt-in: a full build of skel_sites.c recorded records no site table */
    /* describes when armed (SkeletonSitesTest, not yet understood)                                            */
    rt.ccarm = rt.access_stacks && rt.stack_depth > 1 && ((out && *out) || (parent && *parent)) && rt_ccarm_prepare();
    rt_signal_init();
    if (rt.ccarm) rt_ccarm_write();
    /* memtrace's own descriptors back on their numbers before the trace file takes one (rt_fd.c) */
    if (parent && *parent) mt_inherit_fds(getenv("MEMTRACE_FDS"));
    if (parent && *parent) adopt_memtrace(parent);
    if (out && *out) {
        resolve_path(out_path, sizeof out_path, out, rt.pid);
        rt.to_file = rt_file_open(out_path, rt.pid, (int)mt_parse_long(getenv("MEMTRACE_CODEC"), 10));
        if (!rt.to_file) {
            char msg[4200];
            size_t at = append(msg, 0, sizeof msg, "memtrace: cannot write ");
            at = append(msg, at, sizeof msg, out_path);
            if (rt_file_refused_foreign) at = append(msg, at, sizeof msg, ": it exists and is not a memtrace trace (it is left as it is)");
            at = append(msg, at, sizeof msg, ": the program does not run without the trace it was asked for\n");
            mt_sys3(SYS_write, 2, msg, at);
            /* Before main: nothing of the program ran, nothing is lost, and a script sees the failure. */
            mt_sys3(SYS_exit_group, 1, 0, 0);
        } else if (!by_memtrace) {
            set_descendants_env();
        }
    }
    /* the checking trampolines test the shadow from the first rewritten instruction on: map it before the
     * plans are applied (this constructor runs before the check library's own) */
    if (__memtrace_check_init) __memtrace_check_init();
    rw_apply();
    rt.state = RT_RUNNING;
    rt_report_process(0);
    /* the runtime's own calls into rewritten libraries (dl_iterate_phdr, getenv): not the program's */
    rt_discard_access_slots(0);
    if (autostart) control(1, 0);
}

__attribute__((destructor(101))) static void rt_fini(void)
{
    rt_finish(MT_EXIT_NORMAL, (uint64_t)(int64_t)exit_status, 0, 0, NULL);
}

static int (*app_main)(int, char **, char **);
static int main_wrapper(int argc, char **argv, char **envp)
{
    rt_signal_adopt_raw();
    exit_status = app_main(argc, argv, envp);
    return exit_status;
}

RT_EXPORT int __libc_start_main(int (*main)(int, char **, char **), int argc, char **argv, void (*init)(void),
                                void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
    typeof(&__libc_start_main) next = (typeof(next))rt_next("__libc_start_main");
    app_main = main;
    return next(main_wrapper, argc, argv, init, fini, rtld_fini, stack_end);
}

RT_EXPORT void exit(int status)
{
    exit_status = status;
    void (*next)(int) = (void (*)(int))rt_next("exit");
    next(status);
    __builtin_unreachable();
}

RT_EXPORT void _exit(int status)
{
    rt_finish(MT_EXIT_NORMAL, (uint64_t)(int64_t)status, 0, 0, NULL);
    for (;;) mt_sys1(SYS_exit_group, status);
}
RT_EXPORT void _Exit(int status) __attribute__((alias("_exit")));

/* ---- exec ----------------------------------------------------------------------------------------- */

/* dlsym(RTLD_NEXT) for the wrappers. In rewrite mode its work in libc (do_sym, _dl_catch_exception, the  */
/* dlerror state's lock) is rewritten code and would be recorded as the calling thread's accesses, which  */
/* the program never made (Valgrind Lackey's trace has none): it records into the sink.                   */
void *rt_next(const char *name)
{
    char *saved = rw_sink_enter();
    void *f = dlsym(RTLD_NEXT, name);
    rw_sink_leave(saved);
    return f;
}

static void *next_fn(const char *name) { return rt_next(name); }

static int exec_v(int kind, const char *path, char *const argv[], char *const envp[], uint64_t caller)
{
    rt_finish(MT_EXIT_EXEC, 0, caller, 0, path);
    int r;
    switch (kind) {
    case 0: r = ((int (*)(const char *, char *const[], char *const[]))next_fn("execve"))(path, argv, envp); break;
    case 1: r = ((int (*)(const char *, char *const[]))next_fn("execv"))(path, argv); break;
    case 2: r = ((int (*)(const char *, char *const[]))next_fn("execvp"))(path, argv); break;
    default: r = ((int (*)(const char *, char *const[], char *const[]))next_fn("execvpe"))(path, argv, envp); break;
    }
    rt_unfinish();
    return r;
}

RT_EXPORT int execve(const char *path, char *const argv[], char *const envp[]) { return exec_v(0, path, argv, envp, RT_CALLER); }
RT_EXPORT int execv(const char *path, char *const argv[]) { return exec_v(1, path, argv, NULL, RT_CALLER); }
RT_EXPORT int execvp(const char *file, char *const argv[]) { return exec_v(2, file, argv, NULL, RT_CALLER); }
RT_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[]) { return exec_v(3, file, argv, envp, RT_CALLER); }

RT_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    rt_finish(MT_EXIT_EXEC, 0, RT_CALLER, 0, "");
    int r = ((int (*)(int, char *const[], char *const[]))next_fn("fexecve"))(fd, argv, envp);
    rt_unfinish();
    return r;
}

#define MAX_ARGS 4096
#pragma GCC diagnostic ignored "-Wnonnull-compare" /* glibc declares arg nonnull; execl(path, NULL) is seen */
/* execl, execlp, execle: the arguments become an array, then the v form runs. */
#define COLLECT(first, ap, argv, n) \
    do { \
        argv[0] = (char *)(first); \
        n = 1; \
        if (first) while (n < MAX_ARGS - 1 && (argv[n] = va_arg(ap, char *)) != NULL) n++; \
        argv[n] = NULL; \
    } while (0)

RT_EXPORT int execl(const char *path, const char *arg, ...)
{
    char *argv[MAX_ARGS];
    int n;
    va_list ap;
    va_start(ap, arg);
    COLLECT(arg, ap, argv, n);
    va_end(ap);
    return exec_v(1, path, argv, NULL, RT_CALLER);
}

RT_EXPORT int execlp(const char *file, const char *arg, ...)
{
    char *argv[MAX_ARGS];
    int n;
    va_list ap;
    va_start(ap, arg);
    COLLECT(arg, ap, argv, n);
    va_end(ap);
    return exec_v(2, file, argv, NULL, RT_CALLER);
}

RT_EXPORT int execle(const char *path, const char *arg, ...)
{
    char *argv[MAX_ARGS];
    int n;
    va_list ap;
    va_start(ap, arg);
    COLLECT(arg, ap, argv, n);
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return exec_v(0, path, argv, envp, RT_CALLER);
}

/* ---- fork ----------------------------------------------------------------------------------------- */

/* A fork in three parts, so that a clone without CLONE_VM (rt_clone_process) runs the child's part in its */
/* function: before the system call, then in the child or the parent.                                    */
struct fork_state {
    int parent;
    int saved;
    uint64_t old;
};

static void fork_before(struct fork_state *f)
{
    f->parent = rt.pid;
    f->old = rt_block_signals();
    f->saved = rt_self.internal;
    rt_self.internal = 1; /* the program's atfork handlers run inside: their calls go unrecorded */
    rt_file_fork_prepare();
    rt_lock_take(&rt.registry_lock);
}

static void fork_in_child(const struct fork_state *f)
{
    rt_after_fork_child();
    rt_own_fork_child();
    maps_lock.owner = 0;
    rw_trap_forked();
    rt_self.internal = f->saved;
    if (rt.to_file) {
        size_t at = append(out_path, rt_strlen(out_path), sizeof out_path, ".");
        append_number(out_path, at, sizeof out_path, rt.pid);
        rt_file_fork_child(out_path, rt.pid);
        if (rt.to_file && !by_memtrace) set_descendants_env();
    }
    rt_restore_signals(f->old);
    int recording = rt.recording;
    rt.recording = 0;
    rt_report_process((uint64_t)f->parent);
    if (recording) control(1, 0);
}

static void fork_in_parent(const struct fork_state *f, pid_t p)
{
    rt_lock_drop(&rt.registry_lock);
    rt_file_fork_parent();
    rt_self.internal = f->saved;
    rt_restore_signals(f->old);
    if (p > 0) {
        RT_REC(MT_FORK, struct mt_fork, r);
        r.child_pid = (uint64_t)p;
        rt_emit(&r, sizeof r);
    }
}

static pid_t fork_common(void)
{
    pid_t (*next)(void) = (pid_t (*)(void))next_fn("fork");
    if (rt.state != RT_RUNNING) return next();
    struct fork_state f;
    fork_before(&f);
    pid_t p = next();
    if (p == 0) {
        fork_in_child(&f);
        return 0;
    }
    fork_in_parent(&f, p);
    return p;
}

/* A clone without CLONE_VM makes a process, as fork does, but its child starts in fn on a stack of its own. */
/* It was left alone: the child, on a copy of the runtime's state, wrote its full buffers into its parent's */
/* trace file ("the end record counts 101 chunks, the file holds 206"). Now it is a fork child (a trace of  */
/* its own, MT_FORK in the parent's), and its end, when fn returns, is recorded as its exit with fn's value. */
struct clone_process {
    struct fork_state f;
    int (*fn)(void *);
    void *arg;
};

static int clone_process_child(void *p)
{
    struct clone_process c = *(struct clone_process *)p; /* the parent's stack, copied into the child's memory */
    fork_in_child(&c.f);
    int r = c.fn(c.arg);
    rt_finish(MT_EXIT_NORMAL, (uint64_t)(int64_t)r, 0, 0, NULL); /* glibc's clone makes the exit system call next */
    return r;
}

int rt_clone_process(int (*real)(int (*)(void *), void *, int, void *, ...), int (*fn)(void *), void *stack, int flags,
                     void *arg, pid_t *ptid, void *tls, pid_t *ctid)
{
    struct clone_process c = {.fn = fn, .arg = arg};
    fork_before(&c.f);
    int p = real(clone_process_child, stack, flags, &c, ptid, tls, ctid);
    int e = errno;
    fork_in_parent(&c.f, p);
    errno = e;
    return p;
}

RT_EXPORT pid_t fork(void) { return fork_common(); }

/* vfork. With rewrite plans the child is a real vfork child, as natively: it shares the parent's memory */
/* (a store it makes before exec or _exit is the parent's, which programs rely on to report a failed     */
/* exec) and its TLS, so its probes would write into the parent's buffer at the parent's cursor. So the  */
/* child records into the sink (rw_sink_enter: its accesses are not traced, as a fork child's exec'd     */
/* program is not), and the parent, when it resumes, puts back the cursor it had, kept in a register   */
/* across the system call. rt_finish does nothing in the child (rt_in_vfork_child): its exec and _exit  */
/* must not end the parent's trace. This is assembly, as glibc's vfork is: the child returns from it    */
/* and goes on using the stack, so the return address is kept in %rdi, not in a frame the child          */
/* overwrites. Without plans (memtrace cc) vfork runs as fork, as before.                                */
int rt_vfork_real(void) { return rw_planned() && rt.state == RT_RUNNING; }
pid_t rt_vfork_as_fork(void) { return fork_common(); }
void rt_vfork_child(void) { rw_sink_enter(); }
void rt_vfork_parent(pid_t child)
{
    RT_REC(MT_FORK, struct mt_fork, r);
    r.child_pid = (uint64_t)child;
    rt_emit(&r, sizeof r);
}
long rt_vfork_failed(int error)
{
    errno = -error;
    return -1;
}
int rt_in_vfork_child(void) { return rt.pid && mt_sys0(SYS_getpid) != rt.pid; }

__asm__(".text\n"
        ".globl vfork\n"
        ".type vfork, @function\n"
        "vfork:\n"
        "  endbr64\n"
        "  sub $8, %rsp\n"
        "  call rt_vfork_real\n"
        "  add $8, %rsp\n"
        "  test %eax, %eax\n"
        "  jz rt_vfork_as_fork\n"
        "  pop %rdi\n"                                  /* the return address */
        "  mov __memtrace_cursor@gottpoff(%rip), %rsi\n"
        "  mov %fs:(%rsi), %rdx\n"                       /* the parent's cursor */
        "  mov $58, %eax\n"                              /* SYS_vfork */
        "  syscall\n"
        "  cmp $-4095, %rax\n"
        "  jae 3f\n"
        "  test %eax, %eax\n"
        "  jz 2f\n"
        "  mov %rdx, %fs:(%rsi)\n"                       /* parent: the cursor it had */
        "  push %rdi\n"
        "  push %rax\n"
        "  mov %eax, %edi\n"
        "  call rt_vfork_parent\n"
        "  pop %rax\n"
        "  ret\n"
        "2:\n"                                             /* child */
        "  push %rdi\n"
        "  sub $8, %rsp\n"
        "  call rt_vfork_child\n"
        "  add $8, %rsp\n"
        "  xor %eax, %eax\n"
        "  ret\n"
        "3:\n"
        "  push %rdi\n"
        "  mov %eax, %edi\n"
        "  sub $8, %rsp\n"
        "  call rt_vfork_failed\n"
        "  add $8, %rsp\n"
        "  ret\n"
        ".size vfork, .-vfork\n");

/* ---- threads -------------------------------------------------------------------------------------- */

struct start {
    void *(*fn)(void *);
    void *arg;
    uint64_t parent;
    struct rt_buf *buf;         /* the buffer handed over through the TLS image (rt_thread_start.c), or NULL */
    int busy;                   /* a slot of starts[] in use */
};

/* The start records come from a static pool, not malloc: a malloc in pthread_create and a free in the new  */
/* thread are the runtime's, not the program's, yet in rewrite mode they run rewritten libc (recorded), and */
/* the free made every new thread create a malloc arena that it never would natively (found comparing the  */
/* threads kernel with Lackey). A slot is busy only from pthread_create to the thread's first instruction;  */
/* past 256 such at once, malloc serves, its accesses into the sink.                                        */
static struct start starts[256];

static struct start *start_get(void)
{
    for (unsigned i = 0; i < sizeof starts / sizeof starts[0]; i++)
        if (!__atomic_exchange_n(&starts[i].busy, 1, __ATOMIC_ACQUIRE)) return &starts[i];
    char *saved = rw_sink_enter();
    rt_self.internal = 1;
    struct start *s = malloc(sizeof *s);
    rt_self.internal = 0;
    rw_sink_leave(saved);
    return s;
}

static void start_put(struct start *s)
{
    if (s >= starts && s < starts + sizeof starts / sizeof starts[0]) {
        __atomic_store_n(&s->busy, 0, __ATOMIC_RELEASE);
        return;
    }
    char *saved = rw_sink_enter();
    rt_self.internal = 1;
    free(s);
    rt_self.internal = 0;
    rw_sink_leave(saved);
}

static void *thread_start(void *p)
{
    struct start s = *(struct start *)p;
    start_put(p);
    if (s.buf) rt_thread_begin_in(s.buf, s.parent);
    else if (rt.state == RT_RUNNING) rt_thread_begin(s.parent, 1);
    return s.fn(s.arg);
}

RT_EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    typeof(&pthread_create) next = (typeof(next))next_fn("pthread_create");
    if (rt_self.internal || rt.state != RT_RUNNING) return next(t, attr, fn, arg);
    struct start *s = start_get();
    if (!s) return next(t, attr, fn, arg);
    s->fn = fn;
    s->arg = arg;
    s->parent = (uint64_t)rt_tid();
    rt_self.internal = 1;
    s->buf = rt_handover_begin();
    rt_self.internal = 0;
    int rc = next(t, attr, thread_start, s);
    rt_handover_end(s->buf, rc == 0);
    if (rc) start_put(s);
    return rc;
}
