/* CWE-125 across translation units: a table defined in corpus2_data.c (10 ints) is declared here as
 * `extern int limits[]` and read at index 10. Twin: index 9. */
#include "corpus.h"

extern int limits[];

static void show(size_t i)
{
    print_int(limits[i]); /* BAD */
}

void global_extern_table_bad(void) { show(opaque(10)); }
void global_extern_table_good(void) { show(opaque(9)); }
