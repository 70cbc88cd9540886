/*
 * check_inline.c: `memtrace cc --check`'s inlined frames (docs/check.md, "Inlined frames"). When memtrace cc
 * --check links a program or shared library with DWARF, it reads the output's inlined calls
 * (org.memtrace.check.CheckInlines, DwarfInlines.encode) and adds them to it as the section .memtrace_inlines
 * (not loaded: objcopy --add-section). A report reads it back here, once per module and only when a report
 * needs it: the module that holds the code address (dladdr1's link map: its load bias and file name; the
 * executable through /proc/self/exe), its section headers and that section, copied into private pages and
 * parsed by check_inline.h, which checks every count. No file but the loaded module's own is read.
 *
 * What it gets wrong: a module whose file was replaced since it was loaded gives the new file's table (the
 * counts are still checked, the frames may be wrong); one built without --check, or without -g, has no table
 * (its frames show the function alone); objects past the first 64 are not looked at.
 */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mt_common.h"
#include "check.h"
#include "check_inline.h"

#define MAX_MODULES 64
static struct { uintptr_t base; int ok; struct mc_inlines t; } modules[MAX_MODULES];
static int nmodules;

static int read_at(int fd, void *buf, size_t n, off_t at)
{
    for (size_t done = 0; done < n;) {
        ssize_t k = pread(fd, (char *)buf + done, n - done, at + (off_t)done);
        if (k <= 0) return -1;
        done += (size_t)k;
    }
    return 0;
}

/* the section .memtrace_inlines of the ELF file open as fd, parsed into t; 0 on success */
static int load(int fd, struct mc_inlines *t)
{
    Elf64_Ehdr eh;
    if (read_at(fd, &eh, sizeof eh, 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 || eh.e_shnum > 4096 || eh.e_shstrndx >= eh.e_shnum)
        return -1;
    static Elf64_Shdr sh[4096];
    if (read_at(fd, sh, (size_t)eh.e_shnum * sizeof *sh, (off_t)eh.e_shoff)) return -1;
    const Elf64_Shdr *names = &sh[eh.e_shstrndx];
    static const char want[] = ".memtrace_inlines";
    for (int i = 0; i < eh.e_shnum; i++) {
        char name[sizeof want];
        if (sh[i].sh_type == SHT_NOBITS || sh[i].sh_name + sizeof want > names->sh_size ||
            read_at(fd, name, sizeof want, (off_t)(names->sh_offset + sh[i].sh_name)) || memcmp(name, want, sizeof want))
            continue;
        size_t n = sh[i].sh_size;
        if (n < 20 || n > ((size_t)1 << 30)) return -1;
        void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return -1;
        mt_own_add(p, n);
        if (read_at(fd, p, n, (off_t)sh[i].sh_offset) || mc_inlines_parse(p, n, t)) {
            mt_own_remove(p, n);
            munmap(p, n);
            return -1;
        }
        return 0;
    }
    return -1;
}

/* called by check_stacks.c under mc_report_lock */
const struct mc_inlines *mc_inline_table(uintptr_t pc, uintptr_t *bias)
{
    Dl_info info;
    struct link_map *map = NULL;
    if (mc_stack_depth <= 1 || !dladdr1((void *)pc, &info, (void **)&map, RTLD_DL_LINKMAP) || !map) return NULL;
    uintptr_t base = (uintptr_t)info.dli_fbase;
    for (int i = 0; i < nmodules; i++)
        if (modules[i].base == base) {
            *bias = map->l_addr;
            return modules[i].ok ? &modules[i].t : NULL;
        }
    if (nmodules == MAX_MODULES) return NULL;
    int k = nmodules++;
    modules[k].base = base;
    /* the executable's link map has an empty name: its file is /proc/self/exe */
    const char *file = map->l_name && map->l_name[0] ? map->l_name : "/proc/self/exe";
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    modules[k].ok = load(fd, &modules[k].t) == 0;
    close(fd);
    *bias = map->l_addr;
    return modules[k].ok ? &modules[k].t : NULL;
}
