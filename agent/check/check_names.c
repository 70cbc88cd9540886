/*
 * check_names.c: the frames of `memtrace run --check --mode rewrite`'s reports, named as fault mode names them
 * (docs/check.md, "Stacks (--stack-depth N)"): under the report's line, "    #0 file.c:N (prog+OFF) in function",
 * then one line per caller up to main. A binary nobody rebuilt has no call-site table (memtrace cc --check's),
 * so the runtime takes the function from the executable's .symtab (read from /proc/self/exe when a report
 * first needs it, copied into private pages: dladdr knows only exported names), the line from the DWARF line
 * table memtrace handed over with the stack variables (check_stackvars.c, check_line_of), and the callers
 * from the program's frame-pointer chain: from the %rbp the access's trampoline saved (check_rwprobe.c), or
 * the one the wrapper's caller kept (found up the runtime's own chain, frames_caller_rbp), through each
 * function the DWARF table lists as keeping a frame pointer.
 *
 * What it gets wrong: callers only through frames with a frame pointer (gcc -O0, -fno-omit-frame-pointer):
 * where fault mode unwinds -O2 code by .eh_frame, rewrite mode shows the site's own line and function
 * alone (no callers: the #0 line then is not printed, as fault mode prints none for a site in main); no
 * library's names or lines; a .symtab over 64 MB is not read (functions then unnamed).
 */
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"

static struct {
    int state; /* 0 not read, 1 read, -1 none */
    const Elf64_Sym *sym;
    size_t nsym;
    const char *str;
    size_t nstr;
    uintptr_t bias;
} st;

static int exe_bias(struct dl_phdr_info *info, size_t size, void *arg)
{
    *(uintptr_t *)arg = info->dlpi_addr;
    return 1; /* the first is the executable */
}

static void *read_part(int fd, size_t n, off_t at)
{
    if (!n || n > (64UL << 20)) return NULL;
    char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    for (size_t done = 0; done < n;) {
        ssize_t k = pread(fd, p + done, n - done, at + (off_t)done);
        if (k <= 0) { munmap(p, n); return NULL; }
        done += (size_t)k;
    }
    return p;
}

/* the executable's .symtab and its strings, once */
static void load(void)
{
    st.state = -1;
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    Elf64_Ehdr eh;
    Elf64_Shdr *sh = NULL;
    if (pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh && eh.e_ident[EI_MAG0] == ELFMAG0 && eh.e_ident[EI_MAG1] == ELFMAG1 &&
        eh.e_ident[EI_MAG2] == ELFMAG2 && eh.e_ident[EI_MAG3] == ELFMAG3 && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
        eh.e_shentsize == sizeof(Elf64_Shdr) && eh.e_shnum > 0 && eh.e_shnum <= 4096)
        sh = read_part(fd, (size_t)eh.e_shnum * sizeof *sh, (off_t)eh.e_shoff);
    for (int i = 0; sh && i < eh.e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh.e_shnum || sh[i].sh_entsize != sizeof(Elf64_Sym)) continue;
        const Elf64_Shdr *strs = &sh[sh[i].sh_link];
        st.sym = read_part(fd, sh[i].sh_size, (off_t)sh[i].sh_offset);
        st.str = read_part(fd, strs->sh_size, (off_t)strs->sh_offset);
        if (st.sym && st.str && st.str[strs->sh_size - 1] == 0) {
            st.nsym = sh[i].sh_size / sizeof(Elf64_Sym);
            st.nstr = strs->sh_size;
            st.state = 1;
        }
        break;
    }
    if (sh) munmap(sh, (size_t)eh.e_shnum * sizeof *sh);
    close(fd);
    dl_iterate_phdr(exe_bias, &st.bias);
}

/* The executable's function holding pc, by its .symtab, or NULL (check_report.c's site_function asks). */
const char *mc_exe_function(uintptr_t pc)
{
    if (!st.state) load();
    if (st.state < 0 || pc < st.bias) return NULL;
    uint64_t a = pc - st.bias;
    for (size_t i = 0; i < st.nsym; i++) {
        const Elf64_Sym *s = &st.sym[i];
        if (ELF64_ST_TYPE(s->st_info) == STT_FUNC && s->st_size && s->st_value <= a && a - s->st_value < s->st_size &&
            s->st_name < st.nstr)
            return st.str + s->st_name;
    }
    return NULL;
}
