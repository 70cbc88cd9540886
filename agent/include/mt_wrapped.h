/*
 * mt_wrapped.h: the one table of the library functions that both the fault-mode agent (agent/wrappers.c)
 * and the compiled-in runtime (agent/runtime/rt_wrappers.c) wrap. Each line says once what a function is:
 * how it is handled (its kind), its name, return type and parameters, the arguments its real version is
 * called with, the event it makes (MT_FN_*) and what that event carries. Each backend expands the table
 * with one macro per kind (MT_WRAPPED(X) with X(kind, ...) -> BACKEND_kind(...)) and resolves the real
 * functions from it (MT_WRAPPED_REAL), so a function of an existing kind is added here, once.
 *
 * Kinds and their fields after (name, ret, params, args, event):
 *   NEW    allocates a block: (align, size, a0, a1): the alignment and size the block needs; the MT_ALLOC
 *          record carries a0 and a1 as its arguments 0 and 1
 *   BLOCK  a block operation, one MT_BLOCK of kind `op`: (op, dst, src, len, value): the destination,
 *          source (NULL: none) and length; `value` is the byte a store writes. `args` names the pointers
 *          D and S, not the parameters: a backend may pass other addresses for them (the agent passes the
 *          alias view of moved memory); the parameters must be called d and s
 *   OWN    written by hand in each backend (realloc needs its old block, free its order, posix_memalign an
 *          out-parameter, mmap a path...): the table gives the real function's type
 * The I/O functions only the runtime wraps (fault mode sees their system calls) are its own table.
 *
 * `mt_page()` in a field is the backend's page size (each defines it).
 */
#ifndef MEMTRACE_WRAPPED_H
#define MEMTRACE_WRAPPED_H

#include <stddef.h>
#include <sys/types.h>

#define MT_WRAPPED(X) \
    X(NEW, malloc, void *, (size_t n), (n), MT_FN_MALLOC, 16, n, n, 0) \
    X(NEW, aligned_alloc, void *, (size_t al, size_t n), (al, n), MT_FN_ALIGNED_ALLOC, al, n, al, n) \
    X(NEW, memalign, void *, (size_t al, size_t n), (al, n), MT_FN_MEMALIGN, al, n, al, n) \
    X(NEW, valloc, void *, (size_t n), (n), MT_FN_VALLOC, mt_page(), n, n, 0) \
    X(NEW, pvalloc, void *, (size_t n), (n), MT_FN_PVALLOC, mt_page(), n ? (n + mt_page() - 1) & ~(mt_page() - 1) : mt_page(), n, 0) \
    X(OWN, calloc, void *, (size_t m, size_t n)) \
    X(OWN, realloc, void *, (void *old, size_t n)) \
    X(OWN, reallocarray, void *, (void *old, size_t m, size_t n)) \
    X(OWN, free, void, (void *p)) \
    X(OWN, posix_memalign, int, (void **out, size_t al, size_t n)) \
    X(BLOCK, memcpy, void *, (void *d, const void *s, size_t n), (D, S, n), MT_FN_MEMCPY, MT_BLK_COPY, d, s, n, 0) \
    X(BLOCK, memmove, void *, (void *d, const void *s, size_t n), (D, S, n), MT_FN_MEMMOVE, MT_BLK_COPY, d, s, n, 0) \
    X(BLOCK, memset, void *, (void *d, int c, size_t n), (D, c, n), MT_FN_MEMSET, MT_BLK_STORE, d, NULL, n, c) \
    X(OWN, mmap, void *, (void *addr, size_t len, int prot, int flags, int fd, off_t off)) \
    X(OWN, mremap, void *, (void *old, size_t old_len, size_t new_len, int flags, ...)) \
    X(OWN, munmap, int, (void *addr, size_t len)) \
    X(OWN, dlopen, void *, (const char *file, int mode))

/* The real functions, one member each: struct { MT_WRAPPED(MT_WRAPPED_REAL) } real; */
#define MT_WRAPPED_REAL(kind, name, ret, params, ...) ret (*name) params;
/* Resolving them: MT_WRAPPED(MT_WRAPPED_RESOLVE) inside a function, after the struct is called `real`. */
#define MT_WRAPPED_RESOLVE(kind, name, ...) real.name = (typeof(real.name))dlsym(RTLD_NEXT, #name);

/* Before and after a backend's own ones: copying or storing without any library function. */
static inline void mt_plain_block(int copy, void *d, const void *s, size_t n, int value)
{
    unsigned char *dd = (unsigned char *)d;
    const unsigned char *ss = (const unsigned char *)s;
    if (!copy) { while (n--) *dd++ = (unsigned char)value; }
    else if (dd < ss) { while (n--) *dd++ = *ss++; }
    else { dd += n; ss += n; while (n--) *--dd = *--ss; }
}

#endif
