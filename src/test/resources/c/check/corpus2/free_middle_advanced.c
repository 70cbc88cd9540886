/* CWE-761: a parser advances its pointer past leading blanks and frees what it holds, the middle of the
 * block. Twin: the start is kept and freed. */
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

static void parse(int keep_start)
{
    char *buf = malloc(24);
    strcpy(buf, "   token");
    char *start = buf;
    while (*buf == ' ') buf++;
    print_line(buf);
    free(keep_start ? start : buf); /* BAD */
}

void free_middle_advanced_bad(void) { parse((int)opaque(0)); }
void free_middle_advanced_good(void) { parse((int)opaque(1)); }
