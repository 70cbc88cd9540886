/* CWE-761: a tokenizer advances the buffer's pointer past leading blanks and frees what it ends at. */
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

static void run(int bad)
{
    char *data = malloc(32);
    strcpy(data, "   token");
    char *p = data;
    while (*p == ' ') p++;
    print_line(p);
    free(bad ? p : data); /* BAD */
}

void free_middle_bad(void) { run((int)opaque(1)); }
void free_middle_good(void) { run((int)opaque(0)); }
