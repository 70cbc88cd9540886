/* CWE-122: a path joined into malloc(strlen(a) + strlen(b) + 1) with a '/' between: strcat writes the NUL one
 * byte past the block. Twin: + 2. */
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

static void join(const char *dir, const char *file, size_t extra)
{
    char *p = malloc(strlen(dir) + strlen(file) + extra);
    strcpy(p, dir);
    strcat(p, "/");
    strcat(p, file); /* BAD */
    print_line(p);
    free(p);
}

void heap_strcat_room_bad(void) { join("/usr/share", "memtrace.conf", opaque(1)); }
void heap_strcat_room_good(void) { join("/usr/share", "memtrace.conf", opaque(2)); }
