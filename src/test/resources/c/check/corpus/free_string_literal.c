/* CWE-590: a default name (a string literal) freed like the strdup'd names. Twin: strdup'd too. */
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

static char *name_of(const char *given, int bad)
{
    if (given) return strdup(given);
    return bad ? (char *)"anonymous-user" : strdup("anonymous-user");
}

static void run(int bad)
{
    char *name = name_of(NULL, bad);
    print_line(name);
    free(name); /* BAD */
}

void free_string_literal_bad(void) { run((int)opaque(1)); }
void free_string_literal_good(void) { run((int)opaque(0)); }
