/*
 * mt_elf.c (shared by the agent, the check runtime and the runtime): the one reader of an ELF file's section
 * headers and symbol table inside the traced process: the executable's .symtab that names a report's frames
 * (check/check_names.c, check_globals.c's check_function_of), the globals whose padding a rewrite run poisons
 * (check/check_symglobals.c, every library's), those fault mode checks (check_globals.c) and where a
 * `memtrace cc` module's site table is (runtime/rt_ccarm.c, section headers only).
 *
 * What it reads: the ELF header, the section headers, the section names, the first SHT_SYMTAB (or, asked for,
 * the first SHT_DYNSYM when there is none) and the string table its sh_link names, each copied by pread into
 * private memory of its exact size, never the file mapped (a file shortened under the mapping would raise
 * SIGBUS in whoever reads it later). Output: none; struct mt_elf (mt_elf.h), and a sorted function table.
 *
 * What it trusts: nothing of the file's numbers as memory. memtrace runs as root on other people's programs,
 * whose files may be truncated or crafted: every offset and size is checked against the file's length (an
 * overflow-free `size <= len - off`), the header sizes against the structures', counts against limits (65279
 * sections, 256 MiB a part), a string table must end in a NUL and every name index is checked against it,
 * a symbol's section index against the header count. What fails a check costs its part: no section headers,
 * no names, or no symbol table, never a read outside what was read. A read that comes back short (the file
 * shrank since fstat) fails the part the same way.
 *
 * What it gets wrong: addresses (st_value, sh_addr) are taken as the file says: a lying table names the wrong
 * function or global, as it would for any symbolizer; the file read is the one at the path now, which may not
 * be what was loaded (a library replaced since); extended section numbering (e_shnum 0, SHN_XINDEX) and
 * 32-bit or big-endian files are not read; a symbol table over 256 MiB is not read.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "mt_common.h"
#include "mt_elf.h"

#define MT_ELF_MAX_PART (256UL << 20)

void *(*mt_elf_alloc)(size_t n);
void (*mt_elf_release)(void *p, size_t n);

static void *take(size_t n) { return mt_elf_alloc ? mt_elf_alloc(n) : mt_map_pages(n); }

static void give(const void *p, size_t n)
{
    if (!p) return;
    if (mt_elf_release) mt_elf_release((void *)p, n);
    else mt_unmap_pages((void *)p, n);
}

/* whether [off, off+size) lies inside a file of len bytes, without overflow */
static int inside(uint64_t off, uint64_t size, uint64_t len) { return off <= len && size <= len - off; }

/* n bytes at `at` of fd into a private copy, or NULL (out of the file, too big, or a short read) */
static void *part(int fd, uint64_t len, uint64_t at, uint64_t n)
{
    if (!n || n > MT_ELF_MAX_PART || !inside(at, n, len)) return NULL;
    unsigned char *p = take(n);
    if (!p) return NULL;
    for (uint64_t done = 0; done < n;) {
        long k = mt_sys4(SYS_pread64, fd, p + done, n - done, at + done);
        if (k == -EINTR) continue;
        if (k <= 0) {
            give(p, n);
            return NULL;
        }
        done += (uint64_t)k;
    }
    return p;
}

/* a string table section: its bytes, when inside the file and ending in a NUL */
static const char *strings(int fd, uint64_t len, const Elf64_Shdr *s, size_t *n)
{
    if (s->sh_type != SHT_STRTAB) return NULL;
    char *p = part(fd, len, s->sh_offset, s->sh_size);
    if (p && p[s->sh_size - 1] != 0) {
        give(p, s->sh_size);
        p = NULL;
    }
    *n = p ? s->sh_size : 0;
    return p;
}

/* the first symbol table of this type and its strings, both whole, or nothing */
static int symbols(int fd, struct mt_elf *e, uint32_t type)
{
    for (unsigned i = 0; i < e->nsh; i++) {
        const Elf64_Shdr *t = &e->sh[i];
        if (t->sh_type != type) continue;
        if (t->sh_entsize != sizeof(Elf64_Sym) || t->sh_link >= e->nsh || t->sh_size < sizeof(Elf64_Sym)) return 0;
        size_t nstr;
        const char *str = strings(fd, e->len, &e->sh[t->sh_link], &nstr);
        if (!str) return 0;
        uint64_t bytes = t->sh_size - t->sh_size % sizeof(Elf64_Sym);
        const Elf64_Sym *sym = part(fd, e->len, t->sh_offset, bytes);
        if (!sym) {
            give(str, nstr);
            return 0;
        }
        e->sym = sym;
        e->nsym = bytes / sizeof(Elf64_Sym);
        e->str = str;
        e->nstr = nstr;
        e->dynsym = type == SHT_DYNSYM;
        return 1;
    }
    return 0;
}

int mt_elf_read(const char *path, int flags, struct mt_elf *e)
{
    mt_memzero(e, sizeof *e);
    int fd = (int)mt_sys3(SYS_open, path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct stat st;
    Elf64_Ehdr eh;
    int ok = mt_sys2(SYS_fstat, fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
             mt_sys4(SYS_pread64, fd, &eh, sizeof eh, 0) == (long)sizeof eh;
    e->len = ok ? (uint64_t)st.st_size : 0;
    ok = ok && eh.e_ident[EI_MAG0] == ELFMAG0 && eh.e_ident[EI_MAG1] == ELFMAG1 && eh.e_ident[EI_MAG2] == ELFMAG2 &&
         eh.e_ident[EI_MAG3] == ELFMAG3 && eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_ident[EI_DATA] == ELFDATA2LSB &&
         eh.e_shentsize == sizeof(Elf64_Shdr) && eh.e_shnum > 0 && eh.e_shnum < SHN_LORESERVE;
    if (ok) e->sh = part(fd, e->len, eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr));
    if (!e->sh) {
        mt_sys1(SYS_close, fd);
        mt_memzero(e, sizeof *e);
        return -1;
    }
    e->nsh = eh.e_shnum;
    if (eh.e_shstrndx < e->nsh) e->shstr = strings(fd, e->len, &e->sh[eh.e_shstrndx], &e->nshstr);
    if (!(flags & MT_ELF_SECTIONS) && !symbols(fd, e, SHT_SYMTAB) && (flags & MT_ELF_DYNSYM)) symbols(fd, e, SHT_DYNSYM);
    mt_sys1(SYS_close, fd);
    return 0;
}

void mt_elf_free(struct mt_elf *e)
{
    give(e->sh, (size_t)e->nsh * sizeof(Elf64_Shdr));
    give(e->shstr, e->nshstr);
    give(e->sym, e->nsym * sizeof(Elf64_Sym));
    give(e->str, e->nstr);
    mt_memzero(e, sizeof *e);
}

const char *mt_elf_section_name(const struct mt_elf *e, unsigned i)
{
    return e->shstr && i < e->nsh && e->sh[i].sh_name < e->nshstr ? e->shstr + e->sh[i].sh_name : "";
}

const char *mt_elf_sym_name(const struct mt_elf *e, const Elf64_Sym *s)
{
    return s->st_name < e->nstr ? e->str + s->st_name : "";
}

unsigned mt_elf_sym_section(const struct mt_elf *e, const Elf64_Sym *s)
{
    return s->st_shndx > 0 && s->st_shndx < e->nsh ? s->st_shndx : 0;
}

static int is_function(const struct mt_elf *e, const Elf64_Sym *s)
{
    unsigned t = ELF64_ST_TYPE(s->st_info);
    return (t == STT_FUNC || t == STT_GNU_IFUNC) && s->st_size && mt_elf_sym_section(e, s);
}

/* by start, then by the symbol table's order (its first name of an address is the one given) */
static int before(const struct mt_elf_fn *a, const struct mt_elf_fn *b)
{
    return a->beg < b->beg || (a->beg == b->beg && a->order < b->order);
}

/* heapsort: no libc here (qsort may allocate), and n log n whatever the table's order */
static void sift(struct mt_elf_fn *v, size_t at, size_t n)
{
    for (;;) {
        size_t c = 2 * at + 1;
        if (c >= n) return;
        if (c + 1 < n && before(&v[c], &v[c + 1])) c++;
        if (!before(&v[at], &v[c])) return;
        struct mt_elf_fn t = v[at];
        v[at] = v[c];
        v[c] = t;
        at = c;
    }
}

struct mt_elf_fn *mt_elf_functions(const struct mt_elf *e, uint64_t bias, size_t *n)
{
    *n = 0;
    size_t count = 0;
    for (size_t i = 0; i < e->nsym; i++) count += is_function(e, &e->sym[i]);
    struct mt_elf_fn *v = count ? take(count * sizeof *v) : NULL;
    if (!v) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < e->nsym; i++)
        if (is_function(e, &e->sym[i]))
            v[k++] = (struct mt_elf_fn){bias + e->sym[i].st_value, e->sym[i].st_size, mt_elf_sym_name(e, &e->sym[i]), i};
    for (size_t i = k / 2; i-- > 0;) sift(v, i, k);
    for (size_t end = k; end > 1; end--) {
        struct mt_elf_fn t = v[0];
        v[0] = v[end - 1];
        v[end - 1] = t;
        sift(v, 0, end - 1);
    }
    *n = k;
    return v;
}

const struct mt_elf_fn *mt_elf_function_entry(const struct mt_elf_fn *v, size_t n, uint64_t pc)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].beg <= pc) lo = mid + 1;
        else hi = mid;
    }
    /* the nearest start at or before pc whose extent holds it; among equal starts the table's first; a few
     * back for a function that encloses a smaller one (a local label's symbol with a size) */
    const struct mt_elf_fn *best = NULL;
    for (int k = 0; lo > 0 && k < 16; k++, lo--) {
        const struct mt_elf_fn *f = &v[lo - 1];
        if (best && f->beg != best->beg) break;
        if (pc - f->beg < f->size) best = f;
    }
    return best;
}

const char *mt_elf_function_at(const struct mt_elf_fn *v, size_t n, uint64_t pc)
{
    const struct mt_elf_fn *f = mt_elf_function_entry(v, n, pc);
    return f ? f->name : NULL;
}
