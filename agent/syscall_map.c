/*
 * memtrace agent, the memory map's changes: after a system call that unmapped, mapped over, discarded,
 * moved, shrank or re-protected memory, the traced set (traced.c) and the moved pieces' aliases follow it, so
 * that the set stays "sorted, disjoint" and true to what is mapped. Called by the SIGSYS handler (syscall.c)
 * with the call's arguments and result.
 *
 * How its output reads: it writes no record; the set it keeps decides which later accesses fault.
 *
 * What it gets wrong: an mprotect of more than 16 traced pieces at once re-adds only the first 16 with the
 * new rights (the rest keep the old ones until unmapped); memory the kernel maps or unmaps on its own (a
 * shrinking stack guard, vDSO changes) is not followed.
 */
#include "syscall.h"

/* The traced set after call `nr` with arguments `a` returned `ret` (brk_before: the break before a brk). */
void follow_memory_map(long nr, const long *a, long ret, uintptr_t brk_before)
{
    /* The memory map changed under the traced set: keep the set true to it. */
    if (ret >= 0 || (ret < -4095)) {
        spin_lock(&g.lock);
        switch (nr) {
        case SYS_munmap:
            set_remove_locked(page_down((uintptr_t)a[0]), page_up((uintptr_t)a[0] + (uintptr_t)a[1]), 0);
            alias_forget_locked(page_down((uintptr_t)a[0]), page_up((uintptr_t)a[0] + (uintptr_t)a[1]));
            break;
        case SYS_mmap:
            if (a[3] & MAP_FIXED) {
                set_remove_locked(page_down((uintptr_t)ret), page_up((uintptr_t)ret + (uintptr_t)a[1]), 0);
                alias_forget_locked(page_down((uintptr_t)ret), page_up((uintptr_t)ret + (uintptr_t)a[1]));
            }
            break;
        case SYS_madvise:
            if (a[2] == MADV_DONTNEED)
                alias_discard_locked(page_down((uintptr_t)a[0]), page_up((uintptr_t)a[0] + (uintptr_t)a[1]));
            break;
        case SYS_mremap: {
            struct range *r = set_find((uintptr_t)a[0]);
            if (r) {
                int prot = r->prot, kind = r->kind;
                set_remove_locked(page_down((uintptr_t)a[0]), page_up((uintptr_t)a[0] + (uintptr_t)a[1]), 0);
                set_add_locked(page_down((uintptr_t)ret), page_up((uintptr_t)ret + (uintptr_t)a[2]), prot, kind);
            }
            break;
        }
        case SYS_brk:
            /* the heap shrank: pages above the break are gone, a later growth brings fresh ones */
            if ((uintptr_t)ret < brk_before) {
                set_remove_locked(page_up((uintptr_t)ret), page_up(brk_before), 0);
                alias_forget_locked(page_up((uintptr_t)ret), page_up(brk_before));
            }
            break;
        case SYS_mprotect: case SYS_pkey_mprotect: {
            /* The program changed the rights: remember them, and keep traced memory protected. */
            uintptr_t s = page_down((uintptr_t)a[0]), e = page_up((uintptr_t)a[0] + (uintptr_t)a[1]);
            /* Each traced piece is re-added with the new rights (executable or inaccessible memory  */
            /* is not traced: set_add_locked refuses it, and faults there are the program's own).      */
            struct range pieces[16];
            int np = 0;
            for (int i = set_index(s); i < g.nset && g.set[i].start < e && np < 16; i++) {
                pieces[np] = g.set[i];
                if (pieces[np].start < s) pieces[np].start = s;
                if (pieces[np].end > e) pieces[np].end = e;
                np++;
            }
            for (int i = 0; i < np; i++) {
                set_remove_locked(pieces[i].start, pieces[i].end, 0);
                set_add_locked(pieces[i].start, pieces[i].end, (int)a[2], pieces[i].kind);
            }
            break;
        }
        }
        spin_unlock(&g.lock);
    }
}
