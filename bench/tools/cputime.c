/* bench/tools/cputime.c: runs a command and prints the CPU seconds it took, user + system of the whole
 * process tree it waited for (wait4's rusage), to the microsecond; the command's standard output goes to
 * /dev/null so that a bench times the program, not the terminal. Shared by bench/run-check.sh and
 * bench/run-check-plan.sh. What it gets wrong: children the command leaves running are not counted. */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>
int main(int argc, char **argv) {
    pid_t p = fork();
    if (p == 0) { int fd = open("/dev/null", O_WRONLY); dup2(fd, 1); execvp(argv[1], argv + 1); _exit(127); }
    int status;
    struct rusage ru;
    if (p < 0 || wait4(p, &status, 0, &ru) < 0) return 1;
    printf("%.6f\n", ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6);
    return 0;
}
