/*
 * check_callers.c: which call of the program's own code made an allocation or a free, in libmemtrace-check.so
 * (`memtrace cc --check`, and `memtrace run --check` in rewrite mode, where this runtime is the allocator):
 * docs/check.md, "Sites in the user's code". A block allocated by a C++ container is made by libstdc++'s
 * templates (`std::__new_allocator<int>::allocate` calls operator new), so the allocating call's return address
 * names the library, not the line of the user's that made the vector. When that return address lies in the C++
 * library's allocation plumbing (mc_plumbing, check_sites.c: a function whose symbol is `std::…`,
 * `__gnu_cxx::…` or operator new/delete, the rule docs/stacks.md names blocks by), the callers are unwound from
 * the wrapper's frame (common/mt_unwind.c: each module's .eh_frame, so libstdc++'s code without frame pointers
 * is crossed) and the first return address that is not plumbing becomes the block's allocating (or freeing)
 * site: `<new0002@vector_overflow(int, int)+345>`. The report then says which library call it went through
 * (check_sites.c, from the call instruction before that return address).
 *
 * Cost: a cache probe per allocation and free whose caller is the program's own (mc_plumbing's table of 4,096
 * return addresses); a walk of a few frames, some 10 ns each, per one made through the plumbing.
 *
 * What it gets wrong: a walk that finds only plumbing (libstdc++'s own allocations, an exception's) or leaves
 * the stack keeps the call itself; a module loaded by dlopen after the first walk is walked by frame pointers
 * until a walk finds no caller of the program's (the modules are listed again then, at most every 256th such
 * walk); the user's own templates in namespace std are skipped as the library's.
 */
#include <link.h>

#include "check.h"
#include "mt_common.h"


static int listed, misses;

static int add_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    mt_unwind_add_module(info);
    return 0;
}

/* The first return address from pc up that is not the C++ library's plumbing; fp is the frame of the wrapper
 * the program called (the runtime keeps frame pointers), which returns to pc. pc itself when it is the
 * program's, or when no caller is found. */
const void *mc_user_frame(const void *pc, uintptr_t fp)
{
    if (!pc || mc_plumbing((uintptr_t)pc) != 1) return pc;
    if (!__atomic_load_n(&listed, __ATOMIC_ACQUIRE)) {
        dl_iterate_phdr(add_module, NULL);
        __atomic_store_n(&listed, 1, __ATOMIC_RELEASE);
    }
    uint64_t frames[16];
    int n = mt_frames_above(fp, (uint64_t)(uintptr_t)pc, 17, frames);
    for (int i = 0; i < n; i++) {
        uintptr_t at = (uintptr_t)(frames[i] & ~MT_FRAME_CFI);
        int p = mc_plumbing(at);
        if (p == 0) return (const void *)at;
        if (p < 0) return pc;   /* code no symbol names: a frame the walk may have got wrong */
    }
    if ((__atomic_fetch_add(&misses, 1, __ATOMIC_RELAXED) & 255) == 0) dl_iterate_phdr(add_module, NULL);
    return pc;
}
