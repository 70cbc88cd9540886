/* A stand-in for the agent's allocator wrappers in tests: reports malloc/calloc/realloc/free calls with the
 * caller's return address on stderr, as "ALLOC function caller result usable a0 a1". */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

static __thread int inside;

static void report(int function, void *caller, void *result, unsigned long a0, unsigned long a1) {
    if (inside) return;
    inside = 1;
    char line[160];
    int n = snprintf(line, sizeof line, "ALLOC %d %lx %lx %lx %lx %lx\n", function, (unsigned long) caller,
                     (unsigned long) result, result ? (unsigned long) malloc_usable_size(result) : 0UL, a0, a1);
    if (n > 0) write(2, line, (size_t) n);
    inside = 0;
}

void *malloc(size_t size) {
    void *p = __libc_malloc(size);
    report(1, __builtin_return_address(0), p, size, 0);
    return p;
}

void *calloc(size_t n, size_t size) {
    void *p = __libc_calloc(n, size);
    report(2, __builtin_return_address(0), p, n, size);
    return p;
}

void *realloc(void *old, size_t size) {
    void *p = __libc_realloc(old, size);
    report(3, __builtin_return_address(0), p, (unsigned long) old, size);
    return p;
}

void free(void *p) {
    report(4, __builtin_return_address(0), NULL, (unsigned long) p, 0);
    __libc_free(p);
}
