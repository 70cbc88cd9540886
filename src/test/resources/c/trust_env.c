/* Prints its environment, one "WHO NAME=VALUE" line per entry; as "parent" it then executes itself as
 * "child", which prints the environment it was given. A traced run must print what an untraced one does. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv) {
    const char *who = argc > 1 ? argv[1] : "main";
    for (char **e = environ; *e; e++) printf("%s %s\n", who, *e);
    fflush(stdout);
    if (argc > 1 && strcmp(argv[1], "parent") == 0) {
        char *child[] = {argv[0], "child", NULL};
        execv(argv[0], child);
        return 1;
    }
    return 0;
}
