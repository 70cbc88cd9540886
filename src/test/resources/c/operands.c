/* One redirected instruction of each operand shape, in inline assembly so that the exact instruction is
 * known: a base register, base+index*scale+displacement, a RIP-relative global, REX registers r8-r15 as
 * base and index, AVX loads and stores of 32 bytes (two- and three-byte VEX), a locked read-modify-write (lock xadd), and a div
 * (implicit rax and rdx; it takes the trap flag when its page is opened instead).
 * Each touches `cells` (a global) at a known offset; the results are printed, so that a wrong value from a
 * redirected copy shows against the untraced run. */
#include <stdio.h>

long cells[64] __attribute__((aligned(64)));
long rip_cell;

int main(void) {
    for (int i = 0; i < 64; i++) cells[i] = i;
    long *base = cells;
    long index = 3, v = 0, old = 5;
    /* base: cells[1] */
    __asm__ volatile("movq $101, 8(%0)" : : "r"(base) : "memory");
    /* base + index*8 + 16: cells[5] */
    __asm__ volatile("movq 16(%1,%2,8), %0" : "=r"(v) : "r"(base), "r"(index) : "memory");
    /* RIP-relative global */
    __asm__ volatile("movq %0, rip_cell(%%rip)" : : "r"(v + 1000) : "memory");
    /* r8-r15: cells[10] via %r9 + %r10*8 */
    __asm__ volatile("mov %0, %%r9\n\tmov $10, %%r10\n\tmovq $110, (%%r9,%%r10,8)" : : "r"(base) : "r9", "r10", "memory");
    /* AVX: load cells[16..19], store them to cells[20..23] */
    __asm__ volatile("vmovdqu 128(%0), %%ymm0\n\tvmovdqu %%ymm0, 160(%0)\n\tvzeroupper" : : "r"(base) : "xmm0", "memory");
    /* AVX with a three-byte VEX prefix (r11 as base): cells[32..35] to cells[36..39] */
    __asm__ volatile("mov %0, %%r11\n\tvmovdqu 256(%%r11), %%ymm1\n\tvmovdqu %%ymm1, 288(%%r11)\n\tvzeroupper" : : "r"(base)
                     : "r11", "xmm1", "memory");
    /* lock xadd on cells[30] */
    __asm__ volatile("lock xaddq %0, 240(%1)" : "+r"(old) : "r"(base) : "memory");
    /* div by cells[40], with rax and rdx implicit: 4000 / 40 */
    long quotient = 4000, remainder = 0;
    __asm__ volatile("divq 320(%2)" : "+a"(quotient), "+d"(remainder) : "r"(base) : "memory");
    printf("q %ld r %ld ", quotient, remainder);
    printf("v %ld rip %ld old %ld cells %ld %ld %ld %ld %ld %ld %ld\n", v, rip_cell, old, cells[1], cells[10], cells[20],
           cells[23], cells[30], cells[36], cells[39]);
    return 0;
}
