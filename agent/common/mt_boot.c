/*
 * mt_boot.c (shared by the agent and the runtime): the static arena that serves allocations made before
 * the real allocator is known (dlsym allocates while the wrappers resolve it) and, in the runtime, the
 * allocations glibc makes while the runtime starts its writer thread (RT_PRIVATE_HEAP), so the program's
 * heap looks the same whether its trace is written or discarded.
 *
 * Alignment: each block is aligned to what its call asks, at least 16 (glibc's malloc alignment on
 * x86-64, alignof(max_align_t)), and at most a page (the arena itself is page-aligned). The agent used
 * to align to 16 and refuse more; the runtime aligned offsets to 64 in an arena aligned to 16, which
 * promised 64 and delivered 16, and gave aligned_alloc(4096, …) a 64-byte boundary. Aligning to the
 * request is right for both: malloc's 16 packs four times more small blocks than 64 did, and a caller
 * that needs a cache line or a page (a TLS block, valloc) gets it.
 *
 * How it reads: nothing is recorded; a block of the arena is never traced and never freed (free and
 * realloc recognise it by mt_boot_owns), and it is zero, as calloc needs, because it is never reused.
 *
 * What it gets wrong: 64 KiB in all; past that the call fails (NULL, ENOMEM) rather than waiting for the
 * real allocator. Blocks are never given back.
 */
#include "mt_common.h"

#define BOOT_SIZE (64 * 1024)
#define BOOT_MAX_ALIGN 4096

static unsigned char arena[BOOT_SIZE] __attribute__((aligned(BOOT_MAX_ALIGN)));
static size_t used; /* bumped with a compare-and-swap: two threads may start before the allocator is known */

void *mt_boot_alloc(size_t n, size_t align)
{
    if (align < 16) align = 16;
    if (align > BOOT_MAX_ALIGN || (align & (align - 1))) return NULL;
    size_t at, next, old = __atomic_load_n(&used, __ATOMIC_RELAXED);
    do {
        at = (old + align - 1) & ~(align - 1);
        if (at > BOOT_SIZE || n > BOOT_SIZE - at) return NULL;
        next = at + n;
    } while (!__atomic_compare_exchange_n(&used, &old, next, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    MT_ASSERT(((uintptr_t)(arena + at) & (align - 1)) == 0, "a boot block is aligned as asked");
    return arena + at;
}

int mt_boot_owns(const void *p)
{
    return (const unsigned char *)p >= arena && (const unsigned char *)p < arena + BOOT_SIZE;
}

size_t mt_boot_extent(const void *p)
{
    size_t end = __atomic_load_n(&used, __ATOMIC_RELAXED), at = (size_t)((const unsigned char *)p - arena);
    return at < end ? end - at : 0;
}
