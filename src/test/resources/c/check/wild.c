/* wild.c: loads and stores of each size through a pointer to unmapped memory (0x500000000000), which no check
 * foresees and the CPU refuses: said as a wild access with the operand's size and direction, read off the
 * faulting instruction. `./wild KIND` with KIND char|short|int|long|double|vector|read16 (each a store but
 * read16, a 2-byte load); `handled` installs its own SIGSEGV handler first, which must get the fault. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef long long v2 __attribute__((vector_size(16)));

__attribute__((noinline)) static void *opaque(long v) { __asm__ volatile("" : "+r"(v)); return (void *)v; }
__attribute__((noinline)) static void put1(char *p) { *p = 1; /* PUT1 */ }
__attribute__((noinline)) static void put2(short *p) { *p = 2; /* PUT2 */ }
__attribute__((noinline)) static void put4(int *p) { *p = 4; /* PUT4 */ }
__attribute__((noinline)) static void put8(long *p) { *p = 8; /* PUT8 */ }
__attribute__((noinline)) static void putd(double *p, double d) { *p = d; /* PUTD */ }
__attribute__((noinline)) static void putv(v2 *p, v2 v) { *p = v; /* PUTV */ }
__attribute__((noinline)) static int get2(short *p) { return *(volatile short *)p; /* GET2 */ }

static void on_segv(int sig) { (void)sig; static const char m[] = "handled\n"; (void)!write(1, m, sizeof m - 1); _exit(3); }

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    void *far = opaque(0x500000000000L);
    printf("before\n");
    fflush(stdout);
    const char *k = argv[1];
    if (!strcmp(k, "char")) put1(far);
    else if (!strcmp(k, "short")) put2(far);
    else if (!strcmp(k, "int")) put4(far);
    else if (!strcmp(k, "long")) put8(far);
    else if (!strcmp(k, "double")) putd(far, 1.5);
    else if (!strcmp(k, "vector")) putv(far, (v2){1, 2});
    else if (!strcmp(k, "read16")) printf("%d\n", get2(far));
    else if (!strcmp(k, "handled")) { signal(SIGSEGV, on_segv); put4(far); }
    else return 2;
    printf("after\n");
    return 0;
}
