/* An executable whose own code makes no checked access at -O2: main only calls libc (malloc, memset, puts),
 * so its --check plan has no patch and no int3 place (RunCheckDefaultModeTest). memset writes one byte past
 * the 10-byte block when run with no argument; with one argument ("good") it stays inside. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    (void)argv;
    char *p = malloc(10);
    memset(p, 'a', (size_t)(12 - argc));
    p[9] = 0;
    puts(p);
    free(p);
    return 0;
}
