/* CWE-416: memcpy from a block a helper freed ("consumed") on an error path. Twin: no error. */
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

static int consume(char *buf, int fail)
{
    if (fail) { free(buf); return -1; }
    return 0;
}

static void run(int fail)
{
    char *buf = malloc(64);
    memset(buf, 'x', 64);
    int rc = consume(buf, fail);
    char copy[64];
    memcpy(copy, buf, sizeof copy); /* BAD */
    print_bytes(copy, sizeof copy);
    print_int(rc);
    if (!fail) free(buf);
}

void uaf_memcpy_bad(void) { run((int)opaque(1)); }
void uaf_memcpy_good(void) { run((int)opaque(0)); }
