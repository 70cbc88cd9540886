/*
 * Takes the addresses of libc functions, of a function defined in another file of the program (got_other.c)
 * and of got_lib.c's functions, each through the GOT of a PIE; prints where addr_printf and read_counter
 * are, so a Lackey log can be placed.
 */
#include <stdio.h>
#include <stdlib.h>

void *got_local(void);
int read_counter(int n);
void *addr_qsort_lib(void);

void *volatile sink;

__attribute__((noinline)) void addr_printf(void) { sink = (void *) printf; }
__attribute__((noinline)) void addr_qsort(void) { sink = (void *) qsort; }
__attribute__((noinline)) void addr_local(void) { sink = (void *) got_local; }

int main(int argc, char **argv) {
    int s = 0;
    for (int i = 0; i < 3; i++) {
        addr_printf();
        addr_qsort();
        addr_local();
        s += read_counter(i);
        sink = addr_qsort_lib();
    }
    if (argc > 1) printf("%p\n%p\n", (void *) addr_printf, (void *) read_counter);
    printf("%d\n", s);
    return 0;
}
