/* granule.c: single accesses of 1, 2, 4 and 8 bytes around a heap block's partial last granule and its right
 * redzone, for the inline shadow test of `memtrace cc --check` (CheckGranuleTest). ./granule WIDTH OFFSET
 * read|write: one access of WIDTH bytes at OFFSET in a block of 20 bytes (granules 0 and 1 whole, granule 2 of
 * 4 bytes, then the redzone), through a pointer gcc takes as aligned (its check is __asan_load4, not loadN);
 * the offset comes from argv so gcc cannot fold it. Exit 0 and silent when every byte is in the block. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static long get(char *p, long off, int w)
{
    switch (w) {
    case 1: return *(int8_t *)(p + off);   /* READ_1 */
    case 2: return *(int16_t *)(p + off);  /* READ_2 */
    case 4: return *(int32_t *)(p + off);  /* READ_4 */
    default: return *(int64_t *)(p + off); /* READ_8 */
    }
}

__attribute__((noinline)) static void put(char *p, long off, int w)
{
    switch (w) {
    case 1: *(int8_t *)(p + off) = 1; break;   /* WRITE_1 */
    case 2: *(int16_t *)(p + off) = 1; break;  /* WRITE_2 */
    case 4: *(int32_t *)(p + off) = 1; break;  /* WRITE_4 */
    default: *(int64_t *)(p + off) = 1; break; /* WRITE_8 */
    }
}

int main(int argc, char **argv)
{
    if (argc < 4) return 2;
    char *p = calloc(1, 20); /* ALLOC */
    int w = atoi(argv[1]);
    long off = atol(argv[2]);
    long v = 0;
    if (argv[3][0] == 'r') v = get(p, off, w); else put(p, off, w);
    printf("%ld\n", v);
    free(p);
    return 0;
}
