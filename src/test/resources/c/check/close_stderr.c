/* Leaks a block and, at exit, closes its standard streams as coreutils' close_stdout does (atexit, before
 * the checker's leak check runs): the leak report must still reach the terminal. With an argument, the
 * program then puts a file of its own on every high descriptor number (where the checker keeps its copy of
 * stderr): the report must not go into that file. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int take;

static void close_streams(void)
{
    fclose(stdout);
    fclose(stderr);
    if (!take) return;
    int f = open("mine.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    for (int n = 960; n < 1024; n++)
        if (n != f) dup2(f, n);
}

int main(int argc, char **argv)
{
    take = argc > 1;
    atexit(close_streams);
    void *volatile p = malloc(16); /* LEAK */
    p = 0;
    puts("ok");
    return 0;
}
