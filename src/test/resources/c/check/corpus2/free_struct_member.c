/* CWE-590: a buffer embedded in a stack struct freed as if it were a pointer to the heap. Twin: the
 * heap copy is freed. */
#include <stdlib.h>
#include <string.h>
#include "corpus.h"

struct message { int len; char body[32]; };

static void send(int bad)
{
    struct message m;
    m.len = 5;
    strcpy(m.body, "hello");
    char *copy = malloc(32);
    memcpy(copy, m.body, 6);
    print_line(copy);
    free(bad ? m.body : copy); /* BAD */
    if (bad) free(copy);
}

void free_struct_member_bad(void) { send((int)opaque(1)); }
void free_struct_member_good(void) { send((int)opaque(0)); }
