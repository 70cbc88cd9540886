/* CWE-476: strlen of an environment variable that is not set. Twin: checked first. */
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

void null_strlen_bad(void)
{
    const char *v = getenv("MEMTRACE_CORPUS_UNSET_VARIABLE");
    print_int((long)strlen(v)); /* BAD */
}

void null_strlen_good(void)
{
    const char *v = getenv("MEMTRACE_CORPUS_UNSET_VARIABLE");
    print_int(v ? (long)strlen(v) : -1);
}
