/* CWE-787: a file-scope array of 6 option records reset by a loop that runs to a count of 7. */
#include <string.h>
#include "corpus.h"

struct option { char key[12]; int value; };
struct option options[6];

static void reset(size_t n)
{
    for (size_t i = 0; i < n; i++) {
        memset(options[i].key, 0, sizeof options[i].key); /* BAD */
        options[i].value = -1;
    }
    print_bytes(options, sizeof options);
}

void global_struct_loop_bad(void) { reset(opaque(7)); }
void global_struct_loop_good(void) { reset(opaque(6)); }
