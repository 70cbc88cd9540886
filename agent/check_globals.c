/*
 * check_globals.c: `memtrace run --check`'s global buffer overflows (docs/check.md, "Globals"), for a binary
 * nobody rebuilt, with MEMTRACE_CHECK=globals: it has no redzones between its globals, so the extents are its
 * symbols' instead. At start
 * the executable's symbol table (.symtab, else .dynsym: OBJECT symbols of non-zero st_size in writable sections)
 * is read from /proc/self/exe, and its writable data past the relro part (.data, .bss) joins the traced set
 * (modules.c), so every access to it faults into check_global_fault() as heap accesses do into check_fault().
 *
 * The check is by where the address came from, as Spindle's object-level checks are: the instruction's base
 * register, its index register when unscaled, and a RIP-relative or absolute displacement are the access's
 * origins (at -O0 gcc loads `lea g(%rip)` into one of them). An origin inside a global g whose access does not
 * fit in g is an overflow (past g's end) or an underflow (before its start) of g: reported only when the
 * origin is g's first byte, or when the access lands outside every global (in alignment padding, or past the
 * last), since gcc at -O2 may hold `g+4i` in a register for a loop; an origin one past the end of a global
 * whose access fits that global is a loop's cursor, not the next global's pointer. An access with no such origin that lands
 * in no global of .data or .bss is an overflow of the nearer neighbour (the one before it, or an underflow of
 * the one after); not when the address is a constant (RIP-relative or absolute, no register: the linker's
 * .got.plt, __dso_handle and other symbols of no size are there). memcpy, memmove and memset are checked by their ranges against the global their pointer is
 * in (check_run.c's check_block). Reports read as the compiled-in checker's:
 *   memtrace: global overflow: global_counts+40 (a global of 40 bytes) written 4 bytes, 0 bytes past its end,
 *   at plain-c-O0+4661, thread 8104
 * with the symbol's name (a function's static `history.0` said `history`, as gcc's DWARF and ASan name it).
 *
 * What it gets wrong: the executable's globals only (a library's, and read-only data: const tables, string
 * literals, are not traced); an overflow whose origin register points into the middle of a global and lands
 * inside the next one is not seen, nor one whose origin is past the global already (a pointer walk), nor an
 * underflow of a global that another ends right before (its origin is that one's end too); libc's
 * reads of globals are not checked (its string functions read past a string's end by design), its writes
 * are (inside gets, fgets and scanf's family they are left to check_input.c's range after the call); a stripped executable is checked by its .dynsym's objects alone (exported ones: copy-relocated stdout
 * and the like), and then only from an origin at an object's start, never by padding; each access to the
 * executable's .data and .bss costs a fault, so all this is asked for (MEMTRACE_CHECK=globals), not done by
 * default: gzip -6 of 300 KB, whose window is in .bss, ran over 300 s checked so against 7.5 s without.
 */
#include "agent.h"
#include "check/check.h"
#include "mt_elf.h"

int mc_snprintf(char *d, size_t n, const char *fmt, ...);

struct gsym { uintptr_t beg; size_t size; const char *name; };

static struct {
    struct gsym *sym;            /* sorted by beg */
    size_t n;
    struct mt_elf elf;           /* the executable's headers and symbols (mt_elf.c), kept: the names are its strings */
    struct mt_elf_fn *fn;        /* the executable's functions, sorted: a smashed frame's name */
    size_t nfn;
    uintptr_t sec_s[8], sec_e[8]; /* .data and .bss (and their kin): where padding is an overflow */
    int nsec;
    uintptr_t bias;
    int ready;
    int dynsym;                  /* a stripped executable: exported objects only, padding means nothing */
} gl;

static int main_bias(struct dl_phdr_info *info, size_t size, void *arg)
{
    *(uintptr_t *)arg = info->dlpi_addr;
    return 1; /* the first is the executable */
}

static int name_is(const char *n, const char *want)
{
    size_t k = mt_strlen(want);
    return mt_strncmp(n, want, k) == 0 && (n[k] == 0 || n[k] == '.');
}

/* shell sort by address (no libc qsort here: it may allocate) */
static void sort(struct gsym *v, size_t n)
{
    for (size_t gap = n / 2; gap; gap /= 2)
        for (size_t i = gap; i < n; i++)
            for (size_t j = i; j >= gap && v[j - gap].beg > v[j].beg; j -= gap) {
                struct gsym t = v[j];
                v[j] = v[j - gap];
                v[j - gap] = t;
            }
}

/* MEMTRACE_CHECK=...,globals asks for the globals' checks: each access to the executable's .data and .bss then */
/* faults, which a program that keeps its working set in globals pays dearly (gzip -6 of 300 KB: over 300 s of   */
/* run --check instead of 7.5 s), so they are not on by default.                                                 */
int check_globals_wanted(void)
{
    const char *all = getenv("MEMTRACE_CHECK");
    for (const char *v = all; v && *v; v++)
        if ((v == all || v[-1] == ',') && mt_strncmp(v, "globals", 7) == 0 && (v[7] == 0 || v[7] == ','))
            return 1;
    return 0;
}

/* an OBJECT symbol of non-zero size in a writable section */
static int writable_object(const struct mt_elf *e, const Elf64_Sym *s)
{
    unsigned sec = mt_elf_sym_section(e, s);
    return ELF64_ST_TYPE(s->st_info) == STT_OBJECT && s->st_size && sec && (e->sh[sec].sh_flags & SHF_WRITE);
}

/* The executable's global objects and functions, from its file read by the bounded reader (common/mt_elf.c: */
/* every offset checked against the file, so a damaged or crafted executable leaves them unknown, no worse). */
void check_globals_init(void)
{
    const struct mt_elf *e = &gl.elf;
    if (mt_elf_read("/proc/self/exe", MT_ELF_DYNSYM, &gl.elf) != 0) return;
    const Elf64_Shdr *sh = e->sh;
    dl_iterate_phdr(main_bias, &gl.bias);
    for (unsigned i = 0; i < e->nsh; i++) {
        const char *nm = mt_elf_section_name(e, i);
        if ((sh[i].sh_flags & (SHF_ALLOC | SHF_WRITE)) == (SHF_ALLOC | SHF_WRITE) && gl.nsec < 8 &&
            (name_is(nm, ".data") || name_is(nm, ".bss"))) {
            gl.sec_s[gl.nsec] = gl.bias + sh[i].sh_addr;
            gl.sec_e[gl.nsec++] = gl.bias + sh[i].sh_addr + sh[i].sh_size;
        }
    }
    gl.dynsym = e->dynsym;
    if (!e->sym) return;
    /* the functions are read always: a smash's and a stack's names */
    gl.fn = mt_elf_functions(e, gl.bias, &gl.nfn);
    if (!check_globals_wanted()) return;
    const Elf64_Sym *sy = e->sym;
    size_t n = 0;
    for (size_t i = 0; i < e->nsym; i++)
        n += writable_object(e, &sy[i]);
    if (!n) return;
    gl.sym = agent_map(n * sizeof *gl.sym);
    if (!gl.sym) return;
    for (size_t i = 0; i < e->nsym; i++)
        if (writable_object(e, &sy[i]))
            gl.sym[gl.n++] = (struct gsym){gl.bias + sy[i].st_value, sy[i].st_size, mt_elf_sym_name(e, &sy[i])};
    sort(gl.sym, gl.n);
    gl.ready = 1;
}

/* the last global starting at or before a, or NULL */
static const struct gsym *at_or_before(uintptr_t a)
{
    size_t lo = 0, hi = gl.n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (gl.sym[mid].beg <= a) lo = mid + 1; else hi = mid;
    }
    return lo ? &gl.sym[lo - 1] : NULL;
}

/* the global holding a, or NULL */
static const struct gsym *holding(uintptr_t a)
{
    const struct gsym *s = at_or_before(a);
    if (s && a - s->beg < s->size) return s;
    /* an alias or a nested object may start later than an enclosing one: look back a little */
    for (int k = 0; s && k < 8 && s > gl.sym; k++) {
        s--;
        if (a - s->beg < s->size) return s;
    }
    return NULL;
}

static int fits(const struct gsym *s, uintptr_t a, size_t n) { return a >= s->beg && a - s->beg + n <= s->size; }

static int in_sections(uintptr_t a)
{
    for (int i = 0; i < gl.nsec; i++)
        if (a >= gl.sec_s[i] && a < gl.sec_e[i]) return 1;
    return 0;
}

static void describe(const struct gsym *s, struct mc_extent *x)
{
    x->beg = s->beg;
    x->size = s->size;
    x->region = "global";
    size_t k = 0;
    for (; s->name[k] && k + 1 < sizeof x->name; k++) x->name[k] = s->name[k];
    x->name[k] = 0;
    /* a function's static: gcc's assembler name history.0 is the source's history */
    size_t d = k;
    while (d > 0 && x->name[d - 1] >= '0' && x->name[d - 1] <= '9') d--;
    if (d > 1 && d < k && x->name[d - 1] == '.') x->name[d - 1] = 0;
    mc_snprintf(x->desc, sizeof x->desc, "a global of %lu bytes", (unsigned long)s->size);
}

/* The global an access [a, a+n) with these origins leaves, or 0 when it stays in bounds or is not known. */
static int left_global(uintptr_t a, size_t n, const uintptr_t *from, int nfrom, int nregs, struct mc_extent *x)
{
    const struct gsym *home = NULL;
    for (int i = 0; i < nfrom; i++) {
        /* one past a global's end is its pointer too (a loop's cursor at -O2, `movaps %xmm0,-0x10(%rcx)`), */
        /* and may be the next one's start */
        const struct gsym *s = holding(from[i]), *ended = from[i] ? holding(from[i] - 1) : NULL;
        if (ended && fits(ended, a, n)) return 0;
        if (!s) continue;
        if (fits(s, a, n)) return 0;
        if (!home || from[i] == s->beg) home = s;
    }
    const struct gsym *lands = holding(a);
    if (home) {
        int from_start = 0;
        for (int i = 0; i < nfrom; i++) from_start |= from[i] == home->beg;
        if (from_start || (!gl.dynsym && (!lands || !fits(lands, a, n)))) {
            describe(home, x);
            return 1;
        }
        return 0;
    }
    /* a constant address (RIP-relative, absolute) is the linker's: .got.plt, __dso_handle, symbols of no size */
    if (lands || !nregs || gl.dynsym || !in_sections(a)) return 0;
    /* in padding, or past the last global: the nearer neighbour's */
    const struct gsym *before = at_or_before(a), *after = before ? before + 1 : gl.sym;
    if (after >= gl.sym + gl.n || !in_sections(after->beg)) after = NULL;
    if (before && !in_sections(before->beg)) before = NULL;
    if (!before && !after) return 0;
    if (before && (!after || a - (before->beg + before->size) <= after->beg - a)) describe(before, x);
    else describe(after, x);
    return 1;
}

int check_global_owns(uintptr_t a) { return gl.ready && data_span_end(a) != 0; }

/* A fault on the executable's data by the program (fault.c): the operand against its origin's global. */
void check_global_fault(ucontext_t *uc, uintptr_t addr, uintptr_t ip, int libc)
{
    if (!gl.ready) return;
    struct operand_origin o;
    if (!decode_operand_origin(ip, uc->uc_mcontext.gregs, addr, &o)) return;
    check_counted();
    if (libc && (!o.write || ts.in_input)) return; /* a wrapped input function's: its range, after it */
    struct mc_extent x;
    if (!left_global(o.ea, o.size, o.from, o.nfrom, o.nregs, &x)) return;
    check_fault_gr = uc->uc_mcontext.gregs;
    check_report_extent(o.ea, o.size, o.write, ip, NULL, &x);
    check_fault_gr = NULL;
}

/* memcpy, memmove, memset (check_block): the range from p against the global p is in. */
int check_global_range(uintptr_t p, size_t n, int write, uintptr_t pc, const char *fn)
{
    if (!check_global_owns(p)) return 0;
    struct mc_extent x;
    if (!left_global(p, n, &p, 1, 1, &x)) return 0;
    check_report_extent(p, n, write, pc, fn, &x);
    return 1;
}

/* The executable's function holding pc (its .symtab names static ones, which dladdr cannot), or NULL. */
const char *check_function_of(uintptr_t pc)
{
    return mt_elf_function_at(gl.fn, gl.nfn, pc);
}
