/*
 * memtrace agent, start-up: loaded into the traced program with LD_PRELOAD, it records every data access
 * to the program's traced memory and hands the raw facts to memtrace (the JVM) through a shared-memory
 * ring (include/memtrace_stream.h). It names nothing and formats nothing: that is Java's job. agent.h
 * lists the files and the locks; this one attaches.
 *
 * At load (constructor 101) it resolves the real allocator and friends, puts the descriptors memtrace was
 * started with back on their numbers (common/mt_fds.c), opens the ring named by
 * MEMTRACE_RING (without it the agent stays out of the way: every wrapper passes straight through),
 * asks the kernel to kill the program when memtrace dies (PR_SET_PDEATHSIG, which survives the exec that
 * made this process the program), loads the decoder (MEMTRACE_STEP=trap skips it), writes the hello,
 * thread and module/mapping records, installs the SIGSEGV/SIGTRAP/SIGSYS handlers and turns syscall user
 * dispatch on. Recording starts when main() is entered (MEMTRACE_AUTOSTART=0: at memtrace_start()).
 * The environment is put back as it was before memtrace added to it (memtrace's variables, LD_PRELOAD and
 * LD_BIND_NOW restored from MEMTRACE_<name> or removed), so the program sees what it would untraced and
 * programs it execs or spawns run untraced; the ring's name is unlinked once it is mapped.
 *
 * What it gets wrong: constructors of libraries loaded before the agent's run before recording starts and
 * are never seen; a program that calls main-like code without __libc_start_main (static or odd start
 * files) is never recorded under autostart.
 */
#include "agent.h"

/* ------------------------------------------------------------------------------------------------ */
/* Start-up                                                                                         */

static int (*app_main)(int, char **, char **);

static int main_wrapper(int argc, char **argv, char **envp)
{
    if (g.active && g.autostart) control(1, 0);
    return app_main(argc, argv, envp);
}

EXPORT int __libc_start_main(int (*main)(int, char **, char **), int argc, char **argv, void (*init)(void),
                             void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
    app_main = main;
    return real.libc_start_main(main_wrapper, argc, argv, init, fini, rtld_fini, stack_end);
}

/* The variables memtrace sets for the agent alone. */
static const char *const memtrace_vars[] = {"MEMTRACE_RING=", "MEMTRACE_REGIONS=", "MEMTRACE_AUTOSTART=", "MEMTRACE_STACK_DEPTH=",
                                            "MEMTRACE_LD_PRELOAD=", "MEMTRACE_LD_BIND_NOW=", "MEMTRACE_CHECK_FRAMES=", "MEMTRACE_FDS=", 0};

static int starts_with(const char *s, const char *prefix)
{
    return mt_strncmp(s, prefix, mt_strlen(prefix)) == 0;
}

/* Puts the environment back as it was before memtrace added to it, before main runs, so the program   */
/* and whatever it execs or spawns see what they would see untraced (a child is not part of this      */
/* trace): memtrace's variables go, and LD_PRELOAD and LD_BIND_NOW are the user's again. memtrace      */
/* passes the user's value of each as MEMTRACE_<name>=<value> (absent: the user had none), and that    */
/* entry minus its "MEMTRACE_" is the user's entry itself. The loader read LD_BIND_NOW once at start,  */
/* so libraries dlopen'ed later still bind now: what memtrace asked for holds, nothing shows it.       */
static void scrub_environment(void)
{
    extern char **environ;
    char *preload = NULL, *bind_now = NULL;
    for (char **r = environ; *r; r++) {
        if (starts_with(*r, "MEMTRACE_LD_PRELOAD=")) preload = *r + 9;
        else if (starts_with(*r, "MEMTRACE_LD_BIND_NOW=")) bind_now = *r + 9;
    }
    char **w = environ;
    for (char **r = environ; *r; r++) {
        char *e = *r;
        int ours = 0;
        for (const char *const *v = memtrace_vars; *v; v++) ours |= starts_with(e, *v);
        if (ours) continue;
        if (starts_with(e, "LD_PRELOAD=") && !(e = preload)) continue;
        if (starts_with(*r, "LD_BIND_NOW=") && !(e = bind_now)) continue;
        *w++ = e;
    }
    *w = NULL;
}

#define RESOLVE(name) real.name = (typeof(real.name))dlsym(RTLD_NEXT, #name)

__attribute__((constructor(101))) static void agent_init(void)
{
    g.page = sysconf(_SC_PAGESIZE);
    MT_WRAPPED(MT_WRAPPED_RESOLVE)
    RESOLVE(malloc_usable_size);
    real.cxa_finalize = (typeof(real.cxa_finalize))dlsym(RTLD_NEXT, "__cxa_finalize");
    real.libc_start_main = (typeof(real.libc_start_main))dlsym(RTLD_NEXT, "__libc_start_main");
    check_locals_resolve(); /* the string functions check_locals.c wraps for run --check */
    check_input_resolve();  /* and the input functions check_input.c wraps */
    hooks_ready = 1;

    const char *ring_path = getenv("MEMTRACE_RING");
    if (!ring_path) return; /* loaded outside a memtrace session: stay out of the way */
    mt_inherit_fds(getenv("MEMTRACE_FDS")); /* memtrace's own descriptors, on their numbers, before the ring's */
    /* "trap": the route memtrace falls back to without libZydis, forced (StepModesTest compares it with the default) */
    const char *step = getenv("MEMTRACE_STEP");
    int out_of_line = !step || mt_strncmp(step, "trap", 5) != 0;
    g.aliases = out_of_line;
    g.regions = (int)mt_parse_long(getenv("MEMTRACE_REGIONS"), MT_REGION_DATA | MT_REGION_HEAP | MT_REGION_ANON | MT_REGION_FILE);
    g.autostart = (int)mt_parse_long(getenv("MEMTRACE_AUTOSTART"), 1);
    g.stack_depth = (int)mt_parse_long(getenv("MEMTRACE_STACK_DEPTH"), MT_STACK_DEPTH_DEFAULT);
    int fd = (int)mt_sys3(SYS_open, ring_path, O_RDWR | O_CLOEXEC, 0);
    check_locals_path(getenv("MEMTRACE_CHECK_FRAMES")); /* run --check's DWARF table (check_locals.c) */
    scrub_environment();
    if (fd < 0) return;
    struct mt_ring_header hdr;
    if (mt_sys3(SYS_read, fd, &hdr, sizeof hdr) != sizeof hdr || hdr.magic != MT_MAGIC || hdr.version != MT_VERSION) {
        mt_sys1(SYS_close, fd);
        return;
    }
    size_t total = hdr.header_size + hdr.capacity;
    long m = mt_sys6(SYS_mmap, 0, (long)total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    mt_sys1(SYS_close, fd);
    if (mt_failed(m)) return;
    /* Both sides have the ring mapped now: its name goes, so that nothing is left in /dev/shm however */
    /* memtrace or the program ends (SIGKILL included).                                                */
    mt_sys1(SYS_unlink, ring_path);
    g.ring = (struct mt_ring_header *)m;
    g.ring_data = (unsigned char *)m + hdr.header_size;
    g.ring_mask = hdr.capacity - 1;
    g.pid = (int)mt_sys0(SYS_getpid);
    g.ppid = (int)mt_sys0(SYS_getppid);
    /* memtrace killed outright (SIGKILL) must not leave the program running on its own. The setting  */
    /* survives the exec that made this process the program; the check closes the race with a parent  */
    /* that died before it was made.                                                                  */
    mt_sys2(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL);
    if (mt_sys0(SYS_getppid) != g.ppid) mt_sys2(SYS_kill, g.pid, SIGKILL);
    g.threads = 1;
    uint64_t text_start = 0, text_end = 0;
    mt_own_text((const void *)(uintptr_t)agent_init, &text_start, &text_end, g.self_path, sizeof g.self_path);
    g.text_start = (uintptr_t)text_start;
    g.text_end = (uintptr_t)text_end;
    ldso_base = (uintptr_t)getauxval(AT_BASE);
    if (out_of_line) ool_init();
    g.active = 1;
    heap_init();
    /* run --check's real operator new/delete, looked up only when checking. dlsym's allocations        */
    /* (dlerror's message for an operator a C program lacks) come from the boot arena, as dlopen's do    */
    /* (ool_init): they are neither the program's blocks nor recorded.                                   */
    if (g.regions & CHECK_REGION_BIT) {
        if (check_globals_wanted()) g.regions |= MT_REGION_DATA; /* the executable's .data and .bss (modules.c): globals */
        hooks_ready = 0;
        check_resolve();
        hooks_ready = 1;
    }
    check_init(g.regions); /* memtrace run --check: bit 0x100 of MEMTRACE_REGIONS */
    g.regions &= 0xff;
    g.ring->agent_pid = (uint64_t)g.pid;

    REC(MT_HELLO, struct mt_hello, h);
    h.pid = (uint64_t)g.pid;
    h.page_size = (uint64_t)g.page;
    h.agent_text_start = g.text_start;
    h.agent_text_end = g.text_end;
    h.regions = (uint64_t)g.regions;
    emit(&h);
    emit_thread(1, 0);
    scan_new_modules(1);

    uint64_t all_but_ours = ~OUR_SIGNALS;
    if (give_alt_stack()) mt_sys2(SYS_sigaltstack, &ts.alt, 0);
    set_kernel_action(SIGSEGV, (void *)on_segv, SA_SIGINFO | SA_NODEFER | SA_ONSTACK, all_but_ours);
    set_kernel_action(SIGTRAP, (void *)on_trap, SA_SIGINFO | SA_NODEFER | SA_ONSTACK, all_but_ours);
    /* Not on the alternate stack: a handler running there could not change it (program_sigaltstack). */
    set_kernel_action(SIGSYS, (void *)on_sys, SA_SIGINFO | SA_NODEFER, all_but_ours);
    adopt_existing_handlers();
    enable_dispatch();
}
