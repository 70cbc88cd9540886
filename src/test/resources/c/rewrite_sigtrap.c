/* rewrite_sigtrap.c: a program that owns SIGTRAP, for memtrace run --mode rewrite's int3 fallback
 * (RewriteInt3Test). Its handler counts raise(SIGTRAP)s and its own int3; it formats numbers with printf
 * while it blocks every signal (libc's short instructions trap meanwhile); an ignored SIGTRAP is ignored.
 * With an argument it sets SIGTRAP back to the default action and raises it: killed by SIGTRAP. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile int caught, from_int3;

static void on_trap(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    caught++;
    if (si->si_code == SI_KERNEL) from_int3++;
}

int main(int argc, char **argv)
{
    (void)argv;
    struct sigaction a;
    memset(&a, 0, sizeof a);
    a.sa_sigaction = on_trap;
    a.sa_flags = SA_SIGINFO;
    sigfillset(&a.sa_mask);
    sigaction(SIGTRAP, &a, NULL);
    for (int i = 0; i < 3; i++) raise(SIGTRAP);
    __asm__ volatile("int3"); /* the program's own breakpoint: its handler runs, then the program goes on */
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, NULL);
    char buf[256];
    int n = 0;
    for (int i = 0; i < 20; i++)
        n += snprintf(buf, sizeof buf, "%d|%-6.3f|%s|%#x|%c|%lu|%e|%5s|%%|%p\n", i * 37, i / 7.0, "str", i * 255, 'a' + i,
                      123456789UL * (unsigned long)i, i * 1e10, "ab", (void *)0);
    sigprocmask(SIG_UNBLOCK, &all, NULL);
    signal(SIGTRAP, SIG_IGN);
    raise(SIGTRAP);
    printf("%d caught, %d from int3, %d formatted, last %s", caught, from_int3, n, buf);
    fflush(stdout);
    if (argc > 1) {
        signal(SIGTRAP, SIG_DFL);
        raise(SIGTRAP);
    }
    return 0;
}
