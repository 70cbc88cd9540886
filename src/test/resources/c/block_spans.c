/* Block operations across two moved pieces of memory while a second thread is alive: two anonymous
 * mappings of 2 pages each, the second mapped right after the first (each is moved onto its own memfd),
 * a memset over the 3 pages around their boundary, a memcpy from a heap block into the same span and a
 * memmove back out of it, then a memmove within the first mapping that overlaps its source from above.
 * Under memtrace none of them may open a page (windows at risk 0). Prints a
 * checksum and "span ok" when the two mappings were adjacent. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int gate[2];

static void *waiter(void *arg)
{
    char c;
    (void)arg;
    return read(gate[0], &c, 1) == 1 ? NULL : (void *)1;
}

int main(void)
{
    long pg = sysconf(_SC_PAGESIZE);
    char *a = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(a + 2 * pg, 2 * pg);
    char *b = mmap(a + 2 * pg, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (pipe(gate) || b != a + 2 * pg) return 1;
    pthread_t t;
    pthread_create(&t, NULL, waiter, NULL);
    char *span = a + pg;
    size_t n = 3 * pg;
    memset(span, 7, n);
    char *src = malloc(n);
    for (size_t i = 0; i < n; i++) src[i] = (char)(i * 31);
    memcpy(span, src, n);
    memmove(src, span + 1, n - 1);
    memmove(a + 8, a, pg);
    long sum = 0;
    for (size_t i = 0; i < n - 1; i++) sum += src[i];
    for (long i = 0; i < pg + 8; i++) sum += a[i];
    if (write(gate[1], "x", 1) != 1) return 1;
    pthread_join(t, NULL);
    printf("sum %ld span ok\n", sum);
    return 0;
}
