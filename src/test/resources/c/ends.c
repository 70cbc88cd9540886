/* How a process ends: "exec" runs a program that does not exist and goes on, "abort" aborts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
int counter;
int main(int argc, char **argv)
{
    counter = 1;
    if (argc > 1 && strcmp(argv[1], "exec") == 0) {
        char *args[] = {"/nonexistent/prog", NULL};
        execv("/nonexistent/prog", args);
        perror("execv");
        counter = 2;
        return 3;
    }
    if (argc > 1 && strcmp(argv[1], "abort") == 0) abort();
    return 0;
}
