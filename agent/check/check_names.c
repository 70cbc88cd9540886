/*
 * check_names.c: the frames of `memtrace run --check --mode rewrite`'s reports, named as fault mode names them
 * (docs/check.md, "Stacks (--stack-depth N)"): under the report's line, "    #0 file.c:N (prog+OFF) in function",
 * then one line per caller up to main. A binary nobody rebuilt has no call-site table (memtrace cc --check's),
 * so the runtime takes the function from the executable's .symtab (read from /proc/self/exe when a report
 * first needs it, into private pages: dladdr knows only exported names), the line from the DWARF line
 * table memtrace handed over with the stack variables (check_stackvars.c, check_line_of), and the callers
 * from the program's frame-pointer chain: from the %rbp the access's trampoline saved (check_rwprobe.c), or
 * the one the wrapper's caller kept (found up the runtime's own chain, frames_caller_rbp), through each
 * function the DWARF table lists as keeping a frame pointer. The .symtab is read by common/mt_elf.c (every
 * offset checked against the file: a truncated or crafted executable leaves its functions unnamed, nothing
 * worse), its functions sorted once and looked up by binary search.
 *
 * What it gets wrong: callers only through frames with a frame pointer (gcc -O0, -fno-omit-frame-pointer):
 * where fault mode unwinds -O2 code by .eh_frame, rewrite mode shows the site's own line and function
 * alone (no callers: the #0 line then is not printed, as fault mode prints none for a site in main); no
 * library's names or lines; a .symtab over 256 MB is not read (functions then unnamed).
 */
#include <link.h>

#include "check.h"
#include "mt_elf.h"

static struct {
    int state; /* 0 not read, 1 read, -1 none */
    struct mt_elf elf;  /* kept: the table's names are its strings */
    struct mt_elf_fn *fn;
    size_t nfn;
} st;

static int exe_bias(struct dl_phdr_info *info, size_t size, void *arg)
{
    *(uintptr_t *)arg = info->dlpi_addr;
    return 1; /* the first is the executable */
}

/* the executable's functions, sorted once (mt_elf.c: every offset checked against the file) */
static void load(void)
{
    st.state = -1;
    uintptr_t bias = 0;
    dl_iterate_phdr(exe_bias, &bias);
    if (mt_elf_read("/proc/self/exe", 0, &st.elf) != 0) return;
    st.fn = mt_elf_functions(&st.elf, bias, &st.nfn);
    if (st.fn) st.state = 1;
}

/* The executable's function holding pc, by its .symtab, or NULL (check_report.c's site_function asks). */
const char *mc_exe_function(uintptr_t pc)
{
    if (!st.state) load();
    return st.state > 0 ? mt_elf_function_at(st.fn, st.nfn, pc) : NULL;
}
