/* Allocation and free stacks (StackDepthTest): malloc from two call paths through one wrapper, free from
 * two paths (a wrapper and main), then a load from a freed block. */
#include <stdlib.h>

static void *xmalloc(size_t n)
{
    return malloc(n);
}

static void release(void *p)
{
    free(p);
}

static int *make_left(void)
{
    return xmalloc(16);
}

static int *make_right(void)
{
    return xmalloc(32);
}

volatile int sink;

int main(void)
{
    int *a = make_left();
    int *b = make_right();
    a[0] = 1;
    b[0] = 2;
    release(a);
    free(b);
    sink = a[1];
    return 0;
}
