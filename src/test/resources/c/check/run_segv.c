/* Faults no check foresees (RunCheckTest): `./run_segv CASE` prints "before", then makes one bad access that
 * kills the program natively with SIGSEGV, unless the program handles it:
 *   null_write    a store to NULL (through a pointer the compiler cannot see is NULL)
 *   null_field    a load of NULL->next (8 bytes at address 8)
 *   unmapped      a store of 4 bytes at 0x500000000000 (never mapped)
 *   shadow_gap    a store of 4 bytes at 0x10000000000 (unmapped natively; under memtrace inside its shadow
 *                 memory's range, in the part no address has as its shadow, made inaccessible)
 *   read_only     a store into a string literal (mapped, not writable)
 *   non_canonical a load at 0x8000000000000000 (a general protection fault: the kernel gives no address)
 *   handled       a store to NULL with the program's own SIGSEGV handler, which prints and exits 3
 *   killed        raise(SIGSEGV): not a fault, nothing to report
 * Each runs silently to "done" with any other argument. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct node { long value; struct node *next; };

__attribute__((noinline)) static void *opaque(uintptr_t v)
{
    __asm__ volatile("" : "+r"(v));
    return (void *)v;
}

static void on_segv(int sig)
{
    (void)sig;
    static const char msg[] = "handled\n";
    (void)!write(1, msg, sizeof msg - 1);
    _exit(3);
}

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "";
    printf("before\n");
    fflush(stdout);
    if (strcmp(c, "null_write") == 0) *(volatile int *)opaque(0) = 5;
    if (strcmp(c, "null_field") == 0) printf("%p\n", (void *)((volatile struct node *)opaque(0))->next);
    if (strcmp(c, "unmapped") == 0) *(volatile int *)opaque(0x500000000000) = 1;
    if (strcmp(c, "shadow_gap") == 0) *(volatile int *)opaque(0x10000000000) = 1;
    if (strcmp(c, "read_only") == 0) *(volatile char *)opaque((uintptr_t)"literal") = 'L';
    if (strcmp(c, "non_canonical") == 0) printf("%ld\n", *(volatile long *)opaque(0x8000000000000000));
    if (strcmp(c, "handled") == 0) {
        signal(SIGSEGV, on_segv);
        *(volatile int *)opaque(0) = 5;
    }
    if (strcmp(c, "killed") == 0) raise(SIGSEGV);
    printf("done\n");
    return 0;
}
