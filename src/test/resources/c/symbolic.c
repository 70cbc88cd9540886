/* Globals, a static, a use after free, stdout, a library function's accesses, a mapped file and a
 * failed exec, for the symbolic trace. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

int table[20];
static long counter;
char message[] = "hello, symbols";

__attribute__((noinline)) static void tick(void) { counter++; }

int main(void) {
    table[10] = 5;
    tick();
    int *block = malloc(16 * sizeof(int));
    block[3] = 1;
    free(block);
    volatile int stale = block[3];
    (void)stale;
    fputs("to stdout\n", stdout);
    const char *file = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, open("/etc/passwd", O_RDONLY), 0);
    volatile char first = file[0];
    (void)first;
    execl("/nonexistent/program", "program", (char *)NULL);
    table[2] = 9;
    return (int)strlen(message) - 14;
}
