/* A program that leans on what the tracer also uses: its own SIGSEGV handler (recovering with
 * siglongjmp), all signals blocked around a store, a system call given a bad pointer, fork, system()
 * and finally exec. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <errno.h>
#include <string.h>
#include <sys/uio.h>

int guarded;
int blocked_store;
int child_store;
static sigjmp_buf recover;

static void on_segv(int sig) { siglongjmp(recover, 1); }

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    signal(SIGSEGV, on_segv);
    if (sigsetjmp(recover, 1) == 0) {
        *(volatile int *)8 = 1;
        puts("not reached");
    } else {
        guarded = 1;
        puts("own handler ran");
    }

    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    blocked_store = 42;
    sigprocmask(SIG_SETMASK, &old, NULL);

    /* a bad pointer handed straight to the kernel: the call fails with EFAULT, as it does untraced */
    struct iovec *bad = (struct iovec *)8;
    ssize_t got = readv(0, bad, 1);
    printf("readv %zd %s\n", got, strerror(errno));

    pid_t child = fork();
    if (child == 0) {
        child_store = 7;
        printf("child stored %d\n", child_store);
        _exit(5);
    }
    int status;
    waitpid(child, &status, 0);
    printf("child exited with %d\n", WEXITSTATUS(status));
    printf("system returned %d\n", system("echo from system"));
    execl("/bin/echo", "echo", "exec'd echo", (char *)NULL);
    return 1;
}
