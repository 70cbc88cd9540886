/* CWE-121: snprintf's return value added to the position unchecked; once the text is truncated pos passes the
 * end, sizeof buf - pos wraps to a huge size and the next snprintf writes past the stack array. Twin: pos is
 * clamped. */
#include <stdio.h>
#include "corpus.h"

static void list(int clamp)
{
    char buf[24];
    size_t pos = 0;
    static const char *const words[] = { "alpha", "bravo", "charlie", "delta", "echo" };
    for (int i = 0; i < 5; i++) {
        pos += snprintf(buf + pos, sizeof buf - pos, "%s,", words[i]); /* BAD */
        if (clamp && pos >= sizeof buf) pos = sizeof buf - 1;
    }
    print_line(buf);
}

void stack_snprintf_pos_bad(void) { list((int)opaque(0)); }
void stack_snprintf_pos_good(void) { list((int)opaque(1)); }
