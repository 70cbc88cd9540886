/* cmps and scas on traced memory, in inline assembly so that the exact instructions are known: repe cmpsb
 * of two 8-byte strings differing at index 5, one cmpsq whose subtraction overflows, std; repe scasw
 * backwards until a word differs, and repne scasb finding a 0 across the boundary of two pages of a heap
 * block, rep movsb from a global to the stack and back from the stack to another global (the stack side
 * untraced). Then two threads repne-scasb the 64-byte lines of one global page at once, thread t the lines t,
 * t+2, ... Under memtrace each element is emulated through the alias view. Prints rcx, how far rsi/rdi
 * went and the arithmetic flags (CF PF AF ZF SF OF) after each, so that any difference shows against
 * the untraced run. Every asm steps over the red zone before its pushfq. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define FLAGS 0x8d5UL
char left[8] = "abcdeXgh", right[8] = "abcdeYgh";
long big[2] = {(long)0x8000000000000000UL, 1};
short words[4] = {1, 7, 7, 7};
char text[4096] __attribute__((aligned(4096)));
static pthread_barrier_t start;

static void *work(void *arg) {
    long t = (long)arg, total = 0;
    pthread_barrier_wait(&start);
    for (long line = t; line < 64; line += 2) {
        char *d = text + 64 * line;
        long n = 100;
        __asm__ volatile("repne scasb" : "+D"(d), "+c"(n) : "a"(0) : "memory", "cc");
        total += 100 - n;
    }
    return (void *)total;
}

int main(void) {
    unsigned long f;
    char *s = left, *d = right;
    long n = 8;
    __asm__ volatile("repe cmpsb\n\tlea -128(%%rsp), %%rsp\n\tpushfq\n\tpopq %3\n\tlea 128(%%rsp), %%rsp"
                     : "+S"(s), "+D"(d), "+c"(n), "=r"(f) : : "memory", "cc");
    printf("cmpsb rcx %ld rsi +%ld flags %lx\n", n, s - left, f & FLAGS);
    long *p = &big[0], *q = &big[1];
    __asm__ volatile("cmpsq\n\tlea -128(%%rsp), %%rsp\n\tpushfq\n\tpopq %2\n\tlea 128(%%rsp), %%rsp"
                     : "+S"(p), "+D"(q), "=r"(f) : : "memory", "cc");
    printf("cmpsq rdi +%ld flags %lx\n", (char *)q - (char *)&big[1], f & FLAGS);
    short *w = &words[3];
    n = 10;
    __asm__ volatile("std\n\trepe scasw\n\tcld\n\tlea -128(%%rsp), %%rsp\n\tpushfq\n\tpopq %2\n\tlea 128(%%rsp), %%rsp"
                     : "+D"(w), "+c"(n), "=r"(f) : "a"(7) : "memory", "cc");
    printf("scasw rcx %ld rdi %ld flags %lx\n", n, (long)(w - words), f & FLAGS);
    char *block = malloc(3 * 4096);
    char *edge = (char *)(((unsigned long)block + 4096) & ~4095UL) - 2;
    edge[0] = 'a', edge[1] = 'b', edge[2] = 0;
    d = edge;
    n = 100;
    __asm__ volatile("repne scasb\n\tlea -128(%%rsp), %%rsp\n\tpushfq\n\tpopq %2\n\tlea 128(%%rsp), %%rsp"
                     : "+D"(d), "+c"(n), "=r"(f) : "a"(0) : "memory", "cc");
    printf("scasb rcx %ld flags %lx\n", n, f & FLAGS);
    char local[8];
    s = left, d = local, n = 8;
    __asm__ volatile("rep movsb" : "+S"(s), "+D"(d), "+c"(n) : : "memory");
    s = local, d = right, n = 8;
    __asm__ volatile("rep movsb" : "+S"(s), "+D"(d), "+c"(n) : : "memory");
    printf("via the stack %.8s\n", right);
    for (int i = 0; i < 4096; i++) text[i] = i % 64 == 63 ? 0 : 'x';
    pthread_t th[2];
    pthread_barrier_init(&start, 0, 2);
    for (long t = 0; t < 2; t++) pthread_create(&th[t], 0, work, (void *)t);
    for (int t = 0; t < 2; t++) {
        void *total;
        pthread_join(th[t], &total);
        printf("thread %d scanned %ld\n", t, (long)total);
    }
    return 0;
}
