/*
 * A -fPIC library that reads a variable of another shared library (got_var.c) and takes qsort's address,
 * both through its GOT.
 */
#include <stdlib.h>

extern int shared_counter;

__attribute__((noinline)) int read_counter(int n) { return shared_counter + n; }
__attribute__((noinline)) void *addr_qsort_lib(void) { return (void *) qsort; }
