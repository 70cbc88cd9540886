/* Allocation and free stacks of code without frame pointers (StackUnwindTest): built -O2
 * -fomit-frame-pointer -g, malloc four calls below main (outer -> middle -> leaf), in main's thread and in
 * another, a free one call below main, and a malloc from a qsort comparator, below libc's sort. */
#include <pthread.h>
#include <stdlib.h>

__attribute__((noinline)) void *leaf(size_t n)
{
    void *p = malloc(n);
    __asm__ volatile("" : : "r"(p) : "memory");
    return p;
}

__attribute__((noinline)) void *middle(size_t n)
{
    void *p = leaf(n * 2);
    __asm__ volatile("" : : "r"(p) : "memory");
    return p;
}

__attribute__((noinline)) void *outer(size_t n)
{
    void *p = middle(n + 8);
    __asm__ volatile("" : : "r"(p) : "memory");
    return p;
}

__attribute__((noinline)) void drop(void *p)
{
    free(p);
    __asm__ volatile("" : : : "memory");
}

static void *worker(void *arg)
{
    drop(outer((size_t)arg));
    return NULL;
}

static int compare(const void *a, const void *b)
{
    drop(leaf(100));
    return *(const int *)a - *(const int *)b;
}

int main(void)
{
    void *a = outer(8);
    drop(a);
    pthread_t t;
    pthread_create(&t, NULL, worker, (void *)24);
    pthread_join(t, NULL);
    int v[2] = {2, 1};
    qsort(v, 2, sizeof v[0], compare);
    return v[0] - 1;
}
