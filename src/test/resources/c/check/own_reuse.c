/* A range memtrace mapped and unmapped again is the program's to map (RunCheckMappedRootsTest): fgets of a line
 * longer than 1 KB reads it aside into pages of memtrace's own (check_io.c, check_input.c), unmapped when the call
 * returns; the program then maps a page (the kernel gives it the hole just left) and keeps there the only pointer
 * to a block, which is reachable: no leak. With an argument, the twin: the pointer is dropped, one leak. */
#include <stdio.h>
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
    static char text[1501], line[4096];
    memset(text, 'x', 1500);
    text[1500] = '\n';
    FILE *f = fmemopen(text, sizeof text, "r");
    if (!f || !fgets(line, sizeof line, f)) return 2;
    fclose(f);
    void **page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return 3;
    page[100] = make();
    if (argc > 1) page[100] = NULL;
    for (int i = 0; i < 8; i++) free(make());
    scrub();
    return 0;
}
