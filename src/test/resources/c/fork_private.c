/* fork under memtrace: the child writes a global and a heap block the parent traced, then exits; the
 * parent must still see its own values (the child's memory is its own copy), and the child must have
 * seen the parent's values as they were at the fork. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int global_value = 1;

int main(void) {
    int *block = malloc(64 * 1024);
    block[0] = 10;
    block[10000] = 11;
    global_value = 2;
    pid_t pid = fork();
    if (pid == 0) {
        int saw = global_value * 100 + block[0] + block[10000];
        global_value = 3;
        block[0] = 30;
        block[10000] = 31;
        _exit(saw == 221 && global_value == 3 && block[0] == 30 ? 0 : 1);
    }
    int status;
    waitpid(pid, &status, 0);
    printf("child %d parent %d %d %d\n", WEXITSTATUS(status), global_value, block[0], block[10000]);
    return 0;
}
