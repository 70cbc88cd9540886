/* elf_read.c: drives agent/common/mt_elf.c, the check runtime's bounded ELF reader, for ElfReaderTest. Built with
 * -fsanitize=address and the reader's copies taken from malloc, so that a read past any part's end is caught.
 * Usage: elf_read FILE [PC...]; prints what was read, then each PC's function ("-" when none). */
#include <stdio.h>
#include <stdlib.h>

#include "mt_elf.h"

static void *from_malloc(size_t n) { return malloc(n); }
static void to_free(void *p, size_t n) { free(p); }

int main(int argc, char **argv)
{
    mt_elf_alloc = from_malloc;
    mt_elf_release = to_free;
    struct mt_elf e;
    if (argc < 2 || mt_elf_read(argv[1], MT_ELF_DYNSYM, &e) != 0) {
        puts("not read");
        return 0;
    }
    size_t named = 0, total = 0;
    for (unsigned i = 0; i < e.nsh; i++) named += *mt_elf_section_name(&e, i) != 0;
    for (size_t i = 0; i < e.nsym; i++) total += mt_elf_sym_section(&e, &e.sym[i]) != 0;
    size_t nfn;
    struct mt_elf_fn *fn = mt_elf_functions(&e, 0, &nfn);
    printf("sections %u, named %zu, %s %zu, in a section %zu, functions %zu\n", e.nsh, named, e.dynsym ? ".dynsym" : ".symtab",
           e.nsym, total, nfn);
    for (int i = 2; i < argc; i++) {
        const char *f = mt_elf_function_at(fn, nfn, strtoull(argv[i], NULL, 0));
        printf("%s %s\n", argv[i], !f ? "-" : *f ? f : "(no name)");
    }
    free(fn);
    mt_elf_free(&e);
    return 0;
}
