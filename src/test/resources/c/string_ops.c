/* String instructions on traced memory, in inline assembly so that the exact instructions are known:
 * rep movsb of 10 bytes, rep stosq of 4 quadwords, rep movsd backwards (DF set) of 3 doublewords, one
 * lodsw, and rep stosb of 3 bytes across the boundary of two pages of a heap block. Under memtrace they are
 * emulated through the alias view, one record per element as the trap flag would give them. Prints what
 * they produced, so that a wrong value shows against the untraced run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char src[64] __attribute__((aligned(64))) = "0123456789abcdefghijklmnopqrstuvwxyz";
char dst[64] __attribute__((aligned(64)));

int main(void) {
    long n = 10;
    char *s = src, *d = dst;
    __asm__ volatile("rep movsb" : "+S"(s), "+D"(d), "+c"(n) : : "memory");
    n = 4;
    d = dst + 16;
    __asm__ volatile("rep stosq" : "+D"(d), "+c"(n) : "a"(0x4142434445464748L) : "memory");
    n = 3;
    s = src + 8;
    d = dst + 56;
    __asm__ volatile("std\n\trep movsl\n\tcld" : "+S"(s), "+D"(d), "+c"(n) : : "memory");
    unsigned long ax = 0xffffffffffff0000UL;
    s = src + 20;
    __asm__ volatile("lodsw" : "+S"(s), "+a"(ax) : : "memory");
    char *block = malloc(3 * 4096);
    char *edge = (char *)(((unsigned long)block + 4096) & ~4095UL) - 1;
    n = 3;
    d = edge;
    __asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(0x7a) : "memory");
    printf("%.10s %.32s %.12s ax %lx edge %c%c%c\n", dst, dst + 16, dst + 48, ax, edge[0], edge[1], edge[2]);
    return 0;
}
