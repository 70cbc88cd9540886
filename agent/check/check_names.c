/*
 * check_names.c: the functions that name code in `memtrace run --check`'s reports (both modes) and in a
 * `memtrace cc --check` build's reports for code no call-site table covers (docs/check.md, "Reports" and
 * "Stacks (--stack-depth N)"). A binary nobody rebuilt has no call-site table, and dladdr knows only exported
 * names, so a report asks here for the function holding a code address: the module that holds it (dladdr1's
 * link map: its load bias and file name; the executable through /proc/self/exe), its .symtab read once, when a
 * report first names code of it, into private pages, its functions sorted and looked up by binary search.
 * check_sites.c then names the allocating call of a block `<malloc0001@make+24>`, its site `make+24` (and
 * `uaf.c:3` from the DWARF line table memtrace handed over: check_stackvars.c, check_line_of), and each frame's
 * function; the callers come from the program's frame-pointer chain (check_stackvars.c, mc_frames_above). The
 * .symtab is read by common/mt_elf.c (every offset checked against the file: a truncated or crafted file
 * leaves its functions unnamed, nothing worse). No file but a loaded module's own is read.
 *
 * What it gets wrong: a module whose file was replaced since it was loaded (or loaded by a relative name from
 * another directory than the one the program is in now) names its code by that file's table, possibly wrongly;
 * a stripped module (Debian's libc) has no .symtab and is left to dladdr's exported names, else module+offset;
 * a .symtab over 256 MB is not read; modules past the first 64 are not looked at.
 */
#include <dlfcn.h>
#include <link.h>

#include "check.h"
#include "mt_elf.h"

#define MAX_MODULES 64
static struct module {
    uintptr_t base;       /* dladdr's dli_fbase: which module */
    int ok;
    struct mt_elf elf;    /* kept: the table's names are its strings */
    struct mt_elf_fn *fn;
    size_t nfn;
} modules[MAX_MODULES];
static int nmodules;

/* The module holding pc, its .symtab read the first time (under mc_report_lock), or NULL. */
static const struct module *module_of(uintptr_t pc)
{
    Dl_info info;
    struct link_map *map = NULL;
    if (!pc || !dladdr1((void *)pc, &info, (void **)&map, RTLD_DL_LINKMAP) || !map) return NULL;
    uintptr_t base = (uintptr_t)info.dli_fbase;
    for (int i = 0; i < nmodules; i++)
        if (modules[i].base == base) return modules[i].ok ? &modules[i] : NULL;
    if (nmodules == MAX_MODULES) return NULL;
    struct module *m = &modules[nmodules++];
    m->base = base;
    /* the executable's link map has an empty name: its file is /proc/self/exe */
    const char *file = map->l_name && map->l_name[0] ? map->l_name : "/proc/self/exe";
    if (mt_elf_read(file, 0, &m->elf) != 0) return NULL;
    m->fn = mt_elf_functions(&m->elf, map->l_addr, &m->nfn);
    m->ok = m->fn != NULL;
    return m->ok ? m : NULL;
}

/* The function holding pc by its module's .symtab, its start into *beg, or NULL (check_sites.c asks). */
const char *mc_code_function(uintptr_t pc, uintptr_t *beg)
{
    const struct module *m = module_of(pc);
    const struct mt_elf_fn *f = m ? mt_elf_function_entry(m->fn, m->nfn, pc) : NULL;
    if (f && beg) *beg = (uintptr_t)f->beg;
    return f ? f->name : NULL;
}
