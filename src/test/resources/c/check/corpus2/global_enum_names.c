/* CWE-125: a name table of 4 strings indexed by an enum that gained a fifth value. Twin: a known value. */
#include "corpus.h"

enum color { RED, GREEN, BLUE, ALPHA, DEPTH };
static const char *const color_names[4] = { "red", "green", "blue", "alpha" };

static void show(enum color c)
{
    const char *n = color_names[c]; /* BAD */
    print_int(n != 0);
}

void global_enum_names_bad(void) { show((enum color)opaque(DEPTH)); }
void global_enum_names_good(void) { show((enum color)opaque(ALPHA)); }
