/* Real-program sweep (bench/real-run.sh): dlopen/dlclose of libm and libz in a loop (each open maps the
 * library again once the last close unmapped it, so rewrite mode plans and rewrites it each time),
 * posix_spawn and fork+execvp of children that write to the shared standard output, a pipe read back from a
 * child, SIGUSR1/SIGCHLD handlers, and a child that dies by a signal. Prints a deterministic report; exit
 * status 6. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static volatile sig_atomic_t usr1, chld;
static void on_usr1(int s) { (void)s; usr1++; }
static void on_chld(int s) { (void)s; chld++; }

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0); /* children share the descriptor: no buffered text duplicated by fork */
    double sum = 0;
    unsigned long crc = 0;
    for (int i = 0; i < 20; i++) {
        void *m = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
        void *z = dlopen("libz.so.1", RTLD_LAZY);
        if (!m || !z) { printf("dlopen failed: %s\n", dlerror()); return 1; }
        double (*cosine)(double) = (double (*)(double))dlsym(m, "cos");
        unsigned long (*crc32)(unsigned long, const unsigned char *, unsigned) =
            (unsigned long (*)(unsigned long, const unsigned char *, unsigned))dlsym(z, "crc32");
        sum += cosine(i * 0.5);
        char text[32];
        snprintf(text, sizeof text, "round %d", i);
        crc = crc * 31 + crc32(0, (const unsigned char *)text, (unsigned)strlen(text));
        dlclose(z);
        dlclose(m);
    }
    printf("dlopen loop: sum %.6f crc %08lx\n", sum, crc);

    struct sigaction sa = {0};
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    sa.sa_handler = on_chld;
    sigaction(SIGCHLD, &sa, NULL);
    for (int i = 0; i < 5; i++) raise(SIGUSR1);
    kill(getpid(), SIGUSR1);
    printf("SIGUSR1 handled %d times\n", (int)usr1);

    pid_t pid;
    char *echo[] = {"echo", "spawned echo", NULL};
    if (posix_spawnp(&pid, "echo", NULL, NULL, echo, environ) != 0) return 1;
    int st;
    waitpid(pid, &st, 0);
    printf("posix_spawn child: %d\n", WEXITSTATUS(st));

    int fds[2];
    if (pipe(fds) != 0) return 1;
    pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        char *seq[] = {"seq", "3", NULL};
        execvp("seq", seq);
        _exit(127);
    }
    close(fds[1]);
    char buf[64] = {0};
    ssize_t n, got = 0;
    while ((n = read(fds[0], buf + got, sizeof buf - 1 - (size_t)got)) > 0) got += n;
    close(fds[0]);
    waitpid(pid, &st, 0);
    for (char *c = buf; *c; c++) if (*c == '\n') *c = ' ';
    printf("fork+exec seq through a pipe: [%s] status %d\n", buf, WEXITSTATUS(st));

    pid = fork();
    if (pid == 0) { raise(SIGTERM); _exit(0); }
    waitpid(pid, &st, 0);
    printf("child killed by signal %d, SIGCHLD seen: %s\n", WIFSIGNALED(st) ? WTERMSIG(st) : 0, chld > 0 ? "yes" : "no");
    return 6;
}
