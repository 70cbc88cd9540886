/* The first global of each section of the first object linked, read or written one element before its start:
 * gcc puts a redzone after every global, none before the first, so these landed in whatever the linker put
 * there (the C start files' data) until the as step began each section with a guard (GlobalGuards.java).
 * One global per section, so that gcc's order of output cannot put another first.
 * `./first_global CASE bad|good`, `./first_global list`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ring[8];                              /* .bss */
int table[4] = {1, 2, 3, 4};              /* .data */
const int limits[4] = {10, 20, 30, 40};   /* .rodata */

__attribute__((noinline)) static void bss_first_underflow(long i)
{
    ring[i] = 7; /* BAD:bss_first_underflow */
}

__attribute__((noinline)) static void data_first_underflow(long i)
{
    volatile int v = table[i]; /* BAD:data_first_underflow */
    (void)v;
}

__attribute__((noinline)) static void rodata_first_underflow(long i)
{
    volatile int v = limits[i]; /* BAD:rodata_first_underflow */
    (void)v;
}

int main(int argc, char **argv)
{
    static const struct { const char *name; void (*run)(long); } cases[] = {
        {"bss_first_underflow", bss_first_underflow},
        {"data_first_underflow", data_first_underflow},
        {"rodata_first_underflow", rodata_first_underflow},
    };
    if (argc == 2 && strcmp(argv[1], "list") == 0) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) printf("%s\n", cases[i].name);
        return 0;
    }
    if (argc != 3) return 2;
    long index = strcmp(argv[2], "bad") == 0 ? -1 : 1 + argc % 2;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (strcmp(cases[i].name, argv[1]) == 0) {
            cases[i].run(index);
            printf("done\n");
            return 0;
        }
    }
    return 2;
}
