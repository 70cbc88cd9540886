/* CWE-401: an early return on a bad input leaks the buffer read so far. Twin: frees it. */
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

static int parse(const char *text, int bad)
{
    char *work = strdup(text);
    if (strchr(work, '!')) {
        if (!bad) free(work);
        return -1;
    }
    print_line(work);
    free(work);
    return 0;
}

void leak_early_return_bad(void) { print_int(parse(opaque_ptr("oops!"), (int)opaque(1))); }
void leak_early_return_good(void) { print_int(parse(opaque_ptr("oops!"), (int)opaque(0))); }
