/* Calls the thread-local accessors of tls_lib.c; prints where get_gd is, so a Lackey log can be placed. */
#include <stdio.h>

int get_gd(int n);
int bump_ld(int n);

int main(int argc, char **argv) {
    int s = 0;
    for (int i = 0; i < 4; i++) s += get_gd(i) + bump_ld(i);
    if (argc > 1) printf("%p\n", (void *) get_gd);
    printf("%d\n", s);
    return 0;
}
