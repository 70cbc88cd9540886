/* CWE-126 (CWE-170): strncpy(buf, s, sizeof buf) leaves no NUL when s is as long as buf; strlen then reads
 * past the stack array. Twin: the last byte set to NUL. */
#include <string.h>
#include "corpus.h"

static void copy(const char *s, int terminate)
{
    char buf[16];
    char after[16];
    memset(after, 'x', sizeof after);
    strncpy(buf, s, sizeof buf);
    if (terminate) buf[sizeof buf - 1] = '\0';
    print_int((long)strlen(buf)); /* BAD */
    print_bytes(after, sizeof after);
}

void stack_strncpy_overread_bad(void) { copy("0123456789abcdefXYZ", (int)opaque(0)); }
void stack_strncpy_overread_good(void) { copy("0123456789abcdefXYZ", (int)opaque(1)); }
