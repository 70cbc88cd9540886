/* CWE-124: an index parsed from input without a check for negative values: -1 writes before a stack array.
 * Twin: 0. */
#include <stdlib.h>
#include "corpus.h"

static void set_slot(const char *text)
{
    int slots[8] = {0};
    long i = strtol(text, NULL, 10);
    slots[i] = 7; /* BAD */
    print_bytes(slots, sizeof slots);
}

void stack_negative_underwrite_bad(void) { set_slot((const char *)opaque_ptr("-1")); }
void stack_negative_underwrite_good(void) { set_slot((const char *)opaque_ptr("0")); }
