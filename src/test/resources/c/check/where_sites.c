/* where_sites.c: blocks allocated and freed through static helpers, for the sites a report names
 * (WhereSitesTest): each case's block comes from make() and goes back through drop(), so that the allocating
 * and freeing calls lie in functions other than the one that misuses the block, as in ASan's
 * "allocated by"/"freed by" stacks. argv[1] picks the case; no argument: the good twin, silent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *make(size_t n)
{
    char *p = malloc(n); /* MAKE */
    memset(p, 0, n);
    return p;
}

static void drop(char *p)
{
    free(p); /* DROP */
}

static int use_after_free(int k)
{
    char *p = make(16);
    drop(p);
    return p[k]; /* UAF */
}

static int overflow(int k)
{
    char *p = make(16);
    p[15 + k] = 1; /* OVERFLOW */
    int r = p[0];
    drop(p);
    return r;
}

static void double_free(void)
{
    char *p = make(16);
    drop(p);
    drop(p); /* DOUBLE */
}

static void invalid_free(int k)
{
    char *p = make(16);
    drop(p + k); /* INVALID */
}

static void leak(void)
{
    char *p = make(16);
    p[0] = 1;
}

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "";
    int r = 0;
    if (!strcmp(c, "uaf")) r = use_after_free(argc - 1); /* CALL_UAF */
    else if (!strcmp(c, "overflow")) r = overflow(argc - 1); /* CALL_OVERFLOW */
    else if (!strcmp(c, "double")) double_free(); /* CALL_DOUBLE */
    else if (!strcmp(c, "invalid")) invalid_free(argc - 1); /* CALL_INVALID */
    else if (!strcmp(c, "leak")) leak(); /* CALL_LEAK */
    else drop(make(16));
    printf("%d\n", r);
    return 0;
}
