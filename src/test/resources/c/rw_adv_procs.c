/*
 * rw_adv_procs.c: processes and threads made every way libc offers and one it does not, for memtrace run
 * --mode rewrite (RewriteAdversarialTest). In order: fork (the child stores forked[0..100) and exits 7),
 * vfork (the child stores vforked = 1 and _exits), posix_spawn of /bin/echo, system("echo ..."), a raw clone
 * (libc's clone wrapper, CLONE_VM | CLONE_THREAD and no CLONE_SETTLS: natively the child shares its creator's
 * TLS; memtrace's runtime gives it a copy, RewriteProcessesTest)
 * whose child stores cloned[0..100) while its creator waits on the futex of CLONE_CHILD_CLEARTID, a clone
 * without CLONE_VM (a process, as fork makes, whose child stores forked[0..100) and returns 9), and last an
 * execve of itself with the argument "again", which prints "again" and exits 0. Every line is flushed
 * before the next step, so the order is fixed.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
long forked[100], cloned[100];
volatile long vforked;
static volatile pid_t clone_tid;

static int child_fn(void *arg)
{
    for (long i = 0; i < 100; i++) cloned[i] = i + (long)arg;
    return 0;
}

static int process_fn(void *arg)
{
    (void)arg;
    for (long i = 0; i < 100; i++) forked[i] = i;
    return 9;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "again")) {
        printf("again\n");
        return 0;
    }
    setvbuf(stdout, 0, _IONBF, 0);
    pid_t p = fork();
    if (p == 0) {
        for (long i = 0; i < 100; i++) forked[i] = i;
        _exit(7);
    }
    int st;
    waitpid(p, &st, 0);
    printf("fork child exited %d, parent's forked[99] %ld\n", WEXITSTATUS(st), forked[99]);

    p = vfork();
    if (p == 0) {
        vforked = 1;
        _exit(0);
    }
    waitpid(p, &st, 0);
    printf("vfork child exited %d, vforked %ld\n", WEXITSTATUS(st), vforked);

    char *echo[] = {"echo", "spawned", 0};
    if (posix_spawn(&p, "/bin/echo", 0, 0, echo, environ) != 0) return 1;
    waitpid(p, &st, 0);
    printf("posix_spawn child exited %d\n", WEXITSTATUS(st));
    printf("system returned %d\n", system("echo from system"));

    char *stack = mmap(0, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM | CLONE_PARENT_SETTID
                | CLONE_CHILD_CLEARTID;
    if (clone(child_fn, stack + (1 << 16), flags, (void *)1000L, &clone_tid, 0, &clone_tid) < 0) return 2;
    pid_t t;
    while ((t = clone_tid) != 0) syscall(SYS_futex, &clone_tid, FUTEX_WAIT, t, 0, 0, 0);
    printf("clone child stored cloned[99] %ld\n", cloned[99]);

    p = clone(process_fn, stack + (1 << 16), SIGCHLD, 0);
    if (p < 0) return 4;
    waitpid(p, &st, 0);
    printf("clone process exited %d, parent's forked[99] %ld\n", WEXITSTATUS(st), forked[99]);

    execl("/proc/self/exe", argv[0], "again", (char *)0);
    return 3;
}
