/*
 * rw_adv_clone_race.c: 20 raw clones (libc's clone wrapper, CLONE_VM | CLONE_THREAD and no CLONE_SETTLS: the
 * child starts on its creator's TLS) whose child and creator store at once, for memtrace run (rewrite mode,
 * RewriteProcessesTest). In each round the child stores child_data[0..1000) and the creator main_data[0..1000),
 * then the creator spins reading the volatile CLONE_CHILD_CLEARTID word (its loads race with the child's
 * stores, where a futex wait would sleep) at most SPIN times, and then waits on its futex: an unbounded spin
 * recorded hundreds of millions of loads whenever the loaded machine left the child unscheduled (the test took
 * 572 s). Under rewrite mode's runtime the two once shared one TLS cursor and their records corrupted the
 * trace. Prints the sums of both arrays.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ROUNDS 20
#define N 1000
#define SPIN 20000
long child_data[N], main_data[N];
static volatile pid_t clone_tid;

static int child_fn(void *arg)
{
    for (long i = 0; i < N; i++) child_data[i] += i + (long)arg;
    return 0;
}

int main(void)
{
    char *stack = mmap(0, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED) return 1;
    int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM | CLONE_PARENT_SETTID
                | CLONE_CHILD_CLEARTID;
    for (long r = 0; r < ROUNDS; r++) {
        if (clone(child_fn, stack + (1 << 16), flags, (void *)r, &clone_tid, 0, &clone_tid) < 0) return 2;
        for (long i = 0; i < N; i++) main_data[i] += i;
        for (long k = 0; k < SPIN && clone_tid != 0; k++) {
        }
        pid_t t;
        while ((t = clone_tid) != 0) syscall(SYS_futex, &clone_tid, FUTEX_WAIT, t, 0, 0, 0);
    }
    long cs = 0, ms = 0;
    for (long i = 0; i < N; i++) cs += child_data[i], ms += main_data[i];
    printf("child %ld main %ld\n", cs, ms);
    return 0;
}
