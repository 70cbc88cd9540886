/* main.c: the corpus's driver (C). `corpus list` prints the cases; `corpus NAME bad|good` runs one;
 * `corpus all good` runs every twin in turn (as Juliet's main runs every good()). Prints "done" at the end. */
#include <stdio.h>
#include <string.h>

#define CASE(n) void n##_bad(void); void n##_good(void);
#include "cases_c.def"
#undef CASE

static const struct { const char *name; void (*bad)(void), (*good)(void); } cases[] = {
#define CASE(n) {#n, n##_bad, n##_good},
#include "cases_c.def"
#undef CASE
};

int main(int argc, char **argv)
{
    size_t n = sizeof cases / sizeof cases[0];
    if (argc == 2 && strcmp(argv[1], "list") == 0) {
        for (size_t i = 0; i < n; i++) printf("%s\n", cases[i].name);
        return 0;
    }
    if (argc != 3 || (strcmp(argv[2], "bad") != 0 && strcmp(argv[2], "good") != 0)) {
        fprintf(stderr, "usage: corpus list | corpus NAME|all bad|good\n");
        return 2;
    }
    int bad = strcmp(argv[2], "bad") == 0, found = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(argv[1], "all") != 0 && strcmp(argv[1], cases[i].name) != 0) continue;
        found = 1;
        (bad ? cases[i].bad : cases[i].good)();
    }
    if (!found) { fprintf(stderr, "no case %s\n", argv[1]); return 2; }
    printf("done\n");
    return 0;
}
