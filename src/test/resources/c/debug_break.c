/* Breaks one invariant of the memtrace library it runs under, on purpose, through memtrace_debug_break,
 * which only MT_DEBUG builds export (agent/common/mt_common.h): argv[1] names it ("ranges": the agent's
 * traced set; "buffer": the runtime's current buffer; "emit": the runtime's next event faults while it
 * writes it, and a SIGSEGV handler of the program's says so on standard error and exits 5 if it is
 * called; "none": nothing), argv[2] is a file standard error goes to (memtrace keeps the program's own).
 * Then it maps and touches memory (a change of the traced set, an event) and stops recording (the runtime
 * hands its buffer over): the next check made in the normal course aborts. Exits 77 without the hook (a
 * product build), 0 when nothing fired. */
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int table[1024];

static void on_segv(int sig)
{
    (void)sig;
    static const char msg[] = "the program's SIGSEGV handler ran\n";
    write(2, msg, sizeof msg - 1);
    _exit(5);
}

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || dup2(fd, 2) < 0) return 3;
    for (int i = 0; i < 1024; i++) table[i] = i;
    void (*debug_break)(const char *) = (void (*)(const char *))dlsym(RTLD_DEFAULT, "memtrace_debug_break");
    if (!debug_break) {
        fprintf(stderr, "no memtrace_debug_break\n");
        return 77;
    }
    if (strcmp(argv[1], "emit") == 0) signal(SIGSEGV, on_segv);
    if (strcmp(argv[1], "none") != 0) debug_break(argv[1]);
    char *p = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return 4;
    for (int i = 0; i < 1 << 16; i += 4096) p[i] = (char)i;
    void (*stop)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "memtrace_stop");
    if (stop) stop();
    printf("survived %d\n", table[1023] + p[4096]);
    return 0;
}
