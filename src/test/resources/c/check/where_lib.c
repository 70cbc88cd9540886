/* where_lib.c: a shared library whose exported wrappers allocate and free through static helpers, as an
 * xmalloc does (WhereSitesTest): a report names the helper that called malloc or free, by the library's own
 * .symtab under memtrace run --check (dladdr knows only exported names), by its call-site table when the
 * library was built with memtrace cc --check. */
#include <stdlib.h>

static void *get(size_t n)
{
    return malloc(n); /* LIB_MAKE */
}

static void put(void *p)
{
    free(p); /* LIB_DROP */
}

void *xmalloc(size_t n) { return get(n); }

void xfree(void *p) { put(p); }
