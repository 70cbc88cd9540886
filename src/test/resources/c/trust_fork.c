/* Prints the pid of the child it forks, which stores into a global and exits; the parent waits for it. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int shared_value;

int main(void) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < 100; i++) shared_value += i;
        _exit(shared_value == 4950 ? 0 : 1);
    }
    int status;
    waitpid(pid, &status, 0);
    printf("child %d status %d\n", (int)pid, WEXITSTATUS(status));
    return 0;
}
