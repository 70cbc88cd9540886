/* Prints where its own functions, variables and libc's live, as a test fixture for the naming layer. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int table[16] = {1, 2, 3};
static int counter_s = 5;
static long scratch_s[8];

static __attribute__((noinline)) int helper(int x) {
    return x * counter_s + (int) scratch_s[x & 7];
}

__attribute__((noinline)) int findDisparity(const int *a, int n) {
    int s = 0;
    for (int i = 0; i < n; i++) s += a[i] + helper(i);
    return s;
}

static int print_module(struct dl_phdr_info *info, size_t size, void *data) {
    (void) size;
    (void) data;
    printf("MODULE %lx %s\n", (unsigned long) info->dlpi_addr, info->dlpi_name);
    return 0;
}

int main(void) {
    dl_iterate_phdr(print_module, NULL);
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4096];
    while (maps && fgets(line, sizeof line, maps)) printf("MAP %s", line);
    if (maps) fclose(maps);
    printf("ADDR table %lx\n", (unsigned long) &table[10]);
    printf("ADDR counter_s %lx\n", (unsigned long) &counter_s);
    printf("ADDR scratch_s %lx\n", (unsigned long) &scratch_s[1]);
    printf("ADDR helper %lx\n", (unsigned long) helper);
    printf("ADDR findDisparity %lx\n", (unsigned long) findDisparity);
    printf("ADDR stdout %lx\n", (unsigned long) &stdout);
    printf("ADDR puts %lx\n", (unsigned long) dlsym(RTLD_DEFAULT, "puts"));
    printf("ADDR puts_ref %lx\n", (unsigned long) puts);
    printf("ADDR stdout_file %lx\n", (unsigned long) stdout);
    int *block = malloc(528);
    block[131] = 7;
    printf("ADDR block %lx\n", (unsigned long) block);
    free(block);
    printf("RESULT %d\n", findDisparity(table, 16));
    return 0;
}
