/* libc's loads and stores for the comparison with Lackey: memcpy, strlen, qsort, printf and malloc from
 * main. With LIBC_BIAS_FILE set it writes the address of stdout's FILE (libc's _IO_2_1_stdout_) there
 * (through libc as well: both tools see it), by which the test finds libc's load bias. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char text[4096], copy[4096];
static int values[500];

static int ascending(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

int main(void)
{
    for (int i = 0; i < (int)sizeof text - 1; i++) text[i] = (char)('a' + i % 26);
    size_t lengths = 0;
    for (int n = 1; n < 4000; n = n * 3 + 1) {
        memcpy(copy, text, (size_t)n);
        copy[n] = 0;
        lengths += strlen(copy);
    }
    char *heap = malloc(1000);
    memcpy(heap, text, 999);
    heap[999] = 0;
    lengths += strlen(heap + 7);
    free(heap);
    for (int i = 0; i < 500; i++) values[i] = (i * 7919) % 1009;
    qsort(values, 500, sizeof values[0], ascending);
    printf("%zu %d %d %s %5.2f\n", lengths, values[0], values[499], "done", 3.25);
    fflush(stdout);
    const char *out = getenv("LIBC_BIAS_FILE");
    if (out) {
        FILE *f = fopen(out, "w");
        if (!f) return 1;
        fprintf(f, "%lx\n", (unsigned long)stdout);
        fclose(f);
    }
    return 0;
}
