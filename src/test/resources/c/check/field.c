/* field.c: an overflow from one struct member into the next, for `memtrace cc --check` with
 * -D_FORTIFY_SOURCE=2 (CheckOutputTest): strcpy into a member of 8 bytes writes 11, inside the block (no
 * redzone is touched), which glibc's __strcpy_chk knows from gcc's __builtin_object_size. ./field KIND bad|good,
 * KIND heap, stack or sprintf; the good twin copies 7 characters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct record {
    char name[8];
    int id;
    char tail[16];
};

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    const char *text = strcmp(argv[2], "bad") == 0 ? "0123456789" : "0123456";
    if (strcmp(argv[1], "heap") == 0) {
        struct record *r = malloc(sizeof *r); /* ALLOC */
        strcpy(r->name, text); /* BAD:heap */
        r->id = 1;
        free(r);
    } else if (strcmp(argv[1], "stack") == 0) {
        struct record r; /* DECL */
        strcpy(r.name, text); /* BAD:stack */
        r.id = 1;
        printf("%d\n", r.id);
    } else if (strcmp(argv[1], "sprintf") == 0) {
        struct record *r = malloc(sizeof *r);
        sprintf(r->name, "%s", text); /* BAD:sprintf */
        free(r);
    } else {
        return 2;
    }
    printf("done\n");
    return 0;
}
