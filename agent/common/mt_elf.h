/*
 * mt_elf.h: one bounded reader of an ELF file's section headers and symbol table (mt_elf.c), shared by the
 * fault-mode agent (check_globals.c), the check runtime (check/check_names.c, check/check_symglobals.c) and the
 * runtime (runtime/rt_ccarm.c: a `memtrace cc` module's site table).
 * Only <elf.h> and the C types here, so that the check runtime's files include it without the agent's headers.
 */
#ifndef MEMTRACE_ELF_H
#define MEMTRACE_ELF_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

/* What was read of one file, each part a private copy whose every byte was inside the file. */
struct mt_elf {
    uint64_t len;            /* the file's length when read */
    const Elf64_Shdr *sh;    /* its section headers: nsh of them */
    unsigned nsh;
    const char *shstr;       /* the section names' table, nshstr bytes, its last a NUL; NULL when unusable */
    size_t nshstr;
    const Elf64_Sym *sym;    /* .symtab, else .dynsym when asked for; NULL when there is none usable */
    size_t nsym;
    const char *str;         /* the symbols' names, nstr bytes, its last a NUL */
    size_t nstr;
    int dynsym;              /* sym is .dynsym (a stripped file: exported symbols only) */
};

#define MT_ELF_DYNSYM 1      /* mt_elf_read's flag: take .dynsym when there is no .symtab */
#define MT_ELF_SECTIONS 2    /* mt_elf_read's flag: the section headers and their names only, no symbols */

/* The file at path read: 0 with *e filled (sym may still be NULL), or -1 with *e zeroed and nothing held when
 * it is not a 64-bit little-endian ELF file whose section headers lie inside it. */
int mt_elf_read(const char *path, int flags, struct mt_elf *e);
/* Everything mt_elf_read took, given back; *e zeroed. */
void mt_elf_free(struct mt_elf *e);
/* Section i's name, "" when it has none inside the names' table. */
const char *mt_elf_section_name(const struct mt_elf *e, unsigned i);
/* A symbol's name, "" when its index is outside the table. */
const char *mt_elf_sym_name(const struct mt_elf *e, const Elf64_Sym *s);
/* A symbol's section, or 0 (undefined, absolute, common, or an index past the headers). */
unsigned mt_elf_sym_section(const struct mt_elf *e, const Elf64_Sym *s);

/* The functions (STT_FUNC and STT_GNU_IFUNC of non-zero size, in a section) at bias + st_value, sorted. */
struct mt_elf_fn { uint64_t beg, size; const char *name; size_t order; };
/* Their table, its count in *n (0 and NULL when none); the names point into e's strings: keep e. */
struct mt_elf_fn *mt_elf_functions(const struct mt_elf *e, uint64_t bias, size_t *n);
/* The function holding pc (its start, for a report's function+offset), by binary search, or NULL. */
const struct mt_elf_fn *mt_elf_function_entry(const struct mt_elf_fn *v, size_t n, uint64_t pc);
/* The name of the function holding pc, by binary search, or NULL. */
const char *mt_elf_function_at(const struct mt_elf_fn *v, size_t n, uint64_t pc);

/* Where the reader's copies come from and go back to; NULL: anonymous pages. A test points them at malloc and
 * free under AddressSanitizer, so that any read past a copy's end is caught. */
extern void *(*mt_elf_alloc)(size_t n);
extern void (*mt_elf_release)(void *p, size_t n);

#endif
