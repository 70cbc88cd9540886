/* Prints a line, then loads through a null pointer in main (argc 1) or in libc's strlen (argc 2): under
 * rewrite mode the faulting instruction runs as a copy in its trampoline (RewriteCrashTest). */
#include <stdio.h>
#include <string.h>

int *volatile p;
char *volatile s;

int main(int argc, char **argv) {
    (void)argv;
    puts("before");
    fflush(stdout);
    if (argc > 1) return (int)strlen(s);
    return *p; /* the faulting load */
}
