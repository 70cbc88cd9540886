/* rc_main.c: `./case bad` runs the bug, `./case good` its twin; both print "done" if they return. */
#include <stdio.h>
#include <string.h>
#include "rc.h"

int rc_main(int argc, char **argv, void (*bad)(void), void (*good)(void))
{
    if (argc != 2 || (strcmp(argv[1], "bad") != 0 && strcmp(argv[1], "good") != 0)) {
        fprintf(stderr, "usage: %s bad|good\n", argv[0]);
        return 2;
    }
    (strcmp(argv[1], "bad") == 0 ? bad : good)();
    printf("done\n");
    fflush(stdout);
    return 0;
}
