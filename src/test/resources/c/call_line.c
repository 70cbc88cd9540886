/*
 * call_line.c: a fixture for the lines of block operations and for relative source paths. A memset and a
 * memcpy of 64 KiB, each followed by a statement on the next line: the calls' misses belong to their own
 * lines, not to the lines after them. CallLineTest compiles it by a relative path and traces it from
 * another directory.
 * What it gets wrong: nothing it prints is checked by itself; the lines live in CallLineTest.
 */
#include <string.h>
static char src[1 << 16], dst[1 << 16];
int main(void)
{
    memset(src, 1, sizeof src); /* marker: memset */
    memcpy(dst, src, sizeof dst); /* marker: memcpy */
    dst[0] = 2; /* marker: after */
    return dst[100] - 1;
}
