/*
 * rewrite_dlopen.c: RewriteDlopenTest's program. `rewrite_dlopen ROUNDS LIB...` opens LIB[r % count] by
 * dlopen in round r, calls its sum(1000) (what a constructor stored, if any), then fill(1000) and
 * sum(1000), and closes it; it prints the total of the sums. dlopen failing is reported with status 1.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    int rounds = atoi(argv[1]), count = argc - 2;
    long total = 0;
    for (int r = 0; r < rounds; r++) {
        void *h = dlopen(argv[2 + r % count], RTLD_NOW);
        if (!h) {
            fprintf(stderr, "%s\n", dlerror());
            return 1;
        }
        void (*fill)(long) = (void (*)(long))dlsym(h, "fill");
        long (*sum)(long) = (long (*)(long))dlsym(h, "sum");
        total += sum(1000);
        fill(1000);
        total += sum(1000);
        dlclose(h);
    }
    printf("%ld\n", total);
    return 0;
}
