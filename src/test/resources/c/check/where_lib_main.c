/* where_lib_main.c: a use after free of a block where_lib.c's wrappers allocated and freed (WhereSitesTest). */
#include <stdio.h>

void *xmalloc(size_t n);
void xfree(void *p);

int main(int argc, char **argv)
{
    char *p = xmalloc(16);
    xfree(p);
    printf("%d\n", p[argc]); /* LIB_UAF */
    return 0;
}
