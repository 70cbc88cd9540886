/*
 * What the fault-mode agent (the .c files of agent/) and the compiled-in runtime (runtime/) both need inside the traced
 * process and must not take from libc: raw system calls (libc's wrappers may be traced, wrapped or
 * intercepted by syscall user dispatch, and set errno), and the name and GNU build-id of a loaded object
 * (its PT_NOTE segments, read in memory). Header-only and static inline, so each library keeps its own
 * hidden copy and neither exports anything.
 */
#ifndef MEMTRACE_NATIVE_H
#define MEMTRACE_NATIVE_H

#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <sys/syscall.h>

/* A system call issued from the library's own code; returns -errno on failure, as the kernel does. */
static inline long mt_sys6(long n, long a, long b, long c, long d, long e, long f)
{
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}
#define mt_sys0(n) mt_sys6((n), 0, 0, 0, 0, 0, 0)
#define mt_sys1(n, a) mt_sys6((n), (long)(a), 0, 0, 0, 0, 0)
#define mt_sys2(n, a, b) mt_sys6((n), (long)(a), (long)(b), 0, 0, 0, 0)
#define mt_sys3(n, a, b, c) mt_sys6((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define mt_sys4(n, a, b, c, d) mt_sys6((n), (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)

/* The GNU build-id of a loaded object (dl_iterate_phdr's view of it): its bytes, or NULL with *len 0. */
static inline const unsigned char *mt_build_id(const struct dl_phdr_info *info, uint32_t *len)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE) continue;
        const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
        while (p + 12 <= end) {
            const ElfW(Nhdr) *nh = (const void *)p;
            const unsigned char *desc = p + 12 + ((nh->n_namesz + 3) & ~3u);
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && p[12] == 'G' && p[13] == 'N' && p[14] == 'U'
                && p[15] == 0) {
                *len = nh->n_descsz;
                return desc;
            }
            p = desc + ((nh->n_descsz + 3) & ~3u);
        }
    }
    *len = 0;
    return NULL;
}

/* A loaded object's path; the executable, which the loader names "", by /proc/self/exe read into buf. */
static inline const char *mt_module_name(const struct dl_phdr_info *info, char *buf, long size)
{
    if (info->dlpi_name && info->dlpi_name[0]) return info->dlpi_name;
    long n = mt_sys3(SYS_readlink, "/proc/self/exe", buf, size - 1);
    buf[n > 0 ? n : 0] = 0;
    return buf;
}

#endif
