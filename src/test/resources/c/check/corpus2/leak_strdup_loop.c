/* CWE-401: a loop keeps the last of several strdup'd tokens; the earlier ones are overwritten, never freed.
 * Twin: each is freed before the next. */
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

static void run(int careful)
{
    static const char *const tokens[] = { "one", "two", "three" };
    char *last = NULL;
    for (int i = 0; i < 3; i++) {
        if (careful) free(last);
        last = strdup(tokens[i]);
    }
    print_line(last);
    free(last);
}

void leak_strdup_loop_bad(void) { run((int)opaque(0)); }
void leak_strdup_loop_good(void) { run((int)opaque(1)); }
