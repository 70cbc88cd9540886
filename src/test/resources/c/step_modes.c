/* Loads, stores, a read-modify-write, a rep string copy, a heap block and a branch on loaded data: what each
 * stepping route (out of line, trap flag, open pages) must record alike. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long table[64];
static char src[256], dst[256];

int main(void) {
    long *heap = malloc(32 * sizeof *heap);
    for (int i = 0; i < 64; i++) table[i] = i * 3;
    for (int i = 0; i < 32; i++) heap[i] = table[i * 2] + 1;
    long sum = 0;
    for (int i = 0; i < 32; i++)
        if (heap[i] & 1) sum += heap[i];
    table[5] += sum;
    memset(src, 'x', sizeof src);
    __asm__ volatile("rep movsb" : : "S"(src), "D"(dst), "c"(sizeof dst) : "memory");
    free(heap);
    printf("sum %ld %c\n", sum + table[5], dst[100]);
    return 0;
}
