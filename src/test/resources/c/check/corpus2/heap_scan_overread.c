/* CWE-126: a key:value line scanned for its ':' with no check for the end of the string; a line without one
 * reads past the heap block. Twin: the scan stops at the NUL. */
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

static void split(const char *text, int bounded)
{
    size_t n = strlen(text);
    char *line = malloc(n + 1);
    memcpy(line, text, n + 1);
    char *p = line;
    if (bounded) {
        while (*p && *p != ':') p++;
    } else {
        while (*p != ':') p++; /* BAD */
    }
    print_int((long)(p - line));
    free(line);
}

void heap_scan_overread_bad(void) { split("no-delimiter-here", (int)opaque(0)); }
void heap_scan_overread_good(void) { split("no-delimiter-here", (int)opaque(1)); }
