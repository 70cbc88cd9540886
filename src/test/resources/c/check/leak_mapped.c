/* A block whose only pointer lives in memory the program mapped itself: reachable, no leak. With an
 * argument, the twin: the mapping goes, and the block with it is a leak (RunCheckMappedRootsTest). */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

__attribute__((noinline)) static void *make(void)
{
    void *p = malloc(40);
    memset(p, 1, 40);
    return p;
}

/* stale copies of the pointer in dead frames below main's would keep the block reachable */
__attribute__((noinline)) static void scrub(void)
{
    char junk[8192];
    memset(junk, 0, sizeof junk);
    __asm__ volatile("" : : "r"(junk) : "memory");
}

int main(int argc, char **argv)
{
    void **room = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (room == MAP_FAILED) return 1;
    room[100] = make();
    if (argc > 1) munmap(room, 1 << 16);
    for (int i = 0; i < 8; i++) free(make());
    scrub();
    return 0;
}
