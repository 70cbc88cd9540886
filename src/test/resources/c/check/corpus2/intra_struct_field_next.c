/* CWE-121 intra-object (Juliet's char_type_overrun): a name written one character at a time into a struct's
 * 8-byte member, 12 characters, into the member after it. Every byte is inside the struct: ASan and memcheck
 * see nothing. Twin: 7 characters and a NUL. */
#include <stddef.h>
#include "corpus.h"

struct user { char name[8]; int uid; int gid; };

static void set_name(struct user *u, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) u->name[i] = s[i]; /* BAD */
}

static void run(size_t n)
{
    struct user u = { "", 1000, 100 };
    set_name(&u, "administrator", n);
    print_int(u.uid);
    print_int(u.gid);
}

void intra_struct_field_next_bad(void) { run(opaque(12)); }
void intra_struct_field_next_good(void) { run(opaque(7)); }
