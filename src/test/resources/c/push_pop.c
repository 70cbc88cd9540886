/* push and pop with a memory operand on traced memory, in inline assembly so that the exact instructions
 * are known. First, alone: push of a RIP-relative global then pop into the next cell, the same through a
 * base register with displacements, and a push/pop pair whose operands straddle two pages of a heap block.
 * Then two threads copy the cells of one global array into another at once with push/pop, thread t the
 * elements t, t+2, ... Under memtrace every one is emulated through the alias view. Prints the values, so
 * that a wrong one shows against the untraced run. The asm steps over the red zone before it pushes. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define PER 2000
long cells[8] = {11, 0, 33, 0, 55, 0, 0, 0};
long from[2 * PER], to[2 * PER];
static pthread_barrier_t start;

static void *work(void *arg) {
    long t = (long)arg;
    pthread_barrier_wait(&start);
    for (long i = t; i < 2 * PER; i += 2)
        __asm__ volatile("lea -128(%%rsp), %%rsp\n\tpushq (%0)\n\tpopq (%1)\n\tlea 128(%%rsp), %%rsp"
                         : : "r"(&from[i]), "r"(&to[i]) : "memory");
    return 0;
}

int main(void) {
    __asm__ volatile("lea -128(%%rsp), %%rsp\n\tpushq cells(%%rip)\n\tpopq cells+8(%%rip)\n\tlea 128(%%rsp), %%rsp"
                     : : : "memory");
    __asm__ volatile("lea -128(%%rsp), %%rsp\n\tpushq 16(%0)\n\tpopq 24(%0,%1,8)\n\tlea 128(%%rsp), %%rsp"
                     : : "r"(cells), "r"(1L) : "memory"); /* to cells+32 */
    char *block = malloc(3 * 4096);
    char *edge = (char *)(((unsigned long)block + 4096) & ~4095UL) - 4;
    *(long *)edge = 0x1122334455667788L;
    __asm__ volatile("lea -128(%%rsp), %%rsp\n\tpushq (%0)\n\tpopq 8(%0)\n\tlea 128(%%rsp), %%rsp" : : "r"(edge) : "memory");
    for (long i = 0; i < 2 * PER; i++) from[i] = 3 * i;
    pthread_t th[2];
    pthread_barrier_init(&start, 0, 2);
    for (long t = 0; t < 2; t++) pthread_create(&th[t], 0, work, (void *)t);
    for (int t = 0; t < 2; t++) pthread_join(th[t], 0);
    long sum = 0;
    for (long i = 0; i < 2 * PER; i++) sum += to[i] == 3 * i;
    printf("cells %ld %ld %ld edge %lx copied %ld of %d\n", cells[1], cells[4], cells[0], *(long *)(edge + 8), sum, 2 * PER);
    return 0;
}
