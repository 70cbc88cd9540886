/* CWE-127 on a global: a table indexed by a value minus one, read at -1. Twin: a value of 1. */
#include "corpus.h"

static const char *level_first = "first";
long level_table[8] = {10, 20, 30, 40, 50, 60, 70, 80};

static void show(int level)
{
    print_line(level_first);
    print_int(level_table[level - 1]); /* BAD */
}

void global_underread_bad(void) { show((int)opaque(0)); }
void global_underread_good(void) { show((int)opaque(1)); }
