/* CWE-121 on a static buffer: strcpy of 20 chars into static char[16]. Twin: strncpy bounded. */
#include <string.h>
#include "corpus.h"

static char name_buffer[16];

void global_strcpy_overflow_bad(void)
{
    strcpy(name_buffer, (char *)opaque_ptr("abcdefghijklmnopqrst")); /* BAD */
    print_line(name_buffer);
}

void global_strcpy_overflow_good(void)
{
    strncpy(name_buffer, (char *)opaque_ptr("abcdefghijklmnopqrst"), sizeof name_buffer - 1);
    name_buffer[sizeof name_buffer - 1] = '\0';
    print_line(name_buffer);
}
