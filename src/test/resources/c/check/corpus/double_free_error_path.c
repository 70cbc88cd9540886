/* CWE-415: an error path frees a buffer and the cleanup code at the end frees it again. */
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

static int parse(const char *text, int bad)
{
    char *copy = malloc(strlen(text) + 1);
    strcpy(copy, text);
    int rc = 0;
    if (copy[0] == '#') {
        if (bad) free(copy);
        rc = -1;
        goto out;
    }
    print_line(copy);
out:
    free(copy); /* BAD */
    return rc;
}

void double_free_error_path_bad(void) { print_int(parse(opaque_ptr("#comment"), (int)opaque(1))); }
void double_free_error_path_good(void) { print_int(parse(opaque_ptr("#comment"), (int)opaque(0))); }
