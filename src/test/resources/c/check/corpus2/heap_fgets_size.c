/* CWE-122: fgets told the buffer is 64 bytes when malloc gave 32; a 50-character line overflows. Twin: 32. */
#include <stdio.h>
#include <stdlib.h>
#include "corpus.h"

static void read_line(int size)
{
    FILE *f = tmpfile();
    fputs("0123456789012345678901234567890123456789012345678\n", f);
    rewind(f);
    char *buf = malloc(32);
    if (fgets(buf, size, f)) print_line(buf); /* BAD */
    fclose(f);
    free(buf);
}

void heap_fgets_size_bad(void) { read_line((int)opaque(64)); }
void heap_fgets_size_good(void) { read_line((int)opaque(32)); }
