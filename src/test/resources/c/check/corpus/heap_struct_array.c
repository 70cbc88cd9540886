/* CWE-122: a malloc'd array of 10 structs indexed by a count of 11 (a two-field struct per element). */
#include <stdlib.h>
#include "corpus.h"

typedef struct { int x; int y; } point;

static void fill(size_t count)
{
    point *data = malloc(10 * sizeof *data);
    for (size_t i = 0; i < count; i++) {
        data[i].x = (int)i; /* BAD */
        data[i].y = (int)(2 * i);
    }
    print_bytes(data, 10 * sizeof *data);
    free(data);
}

void heap_struct_array_bad(void) { fill(opaque(11)); }
void heap_struct_array_good(void) { fill(opaque(10)); }
