/* CWE-562: a formatter returns its local buffer; the caller prints it after another call reused the stack.
 * ASan finds it only with ASAN_OPTIONS=detect_stack_use_after_return=1 (gcc 12's default is off); memcheck
 * does not (the stack stays addressable). Twin: a static buffer. */
#include <stdio.h>
#include "corpus.h"

static char *format_id(int id, int bad)
{
    static char kept[16];
    char local[16];
    char *out = bad ? local : kept;
    snprintf(out, 16, "id-%d", id);
    return opaque_ptr(out);
}

static void busy(void)
{
    volatile char junk[128];
    for (int i = 0; i < 128; i++) junk[i] = (char)i;
}

static void run(int bad)
{
    char *s = format_id(42, bad);
    busy();
    print_int(s[3]); /* BAD */
}

void stack_use_after_return_local_bad(void) { run((int)opaque(1)); }
void stack_use_after_return_local_good(void) { run((int)opaque(0)); }
