/* A position-dependent executable linked at 0x10000 whose bss ends near 2 GB (RewriteNonPieTest): its
 * trampolines fit neither below its code nor above it within rel32 reach, so rewrite mode refuses it. Built
 * -DHEAP_OVERFLOW it also writes one byte past a block of 16 (run --check's fall back to fault mode keeps its
 * checks: RunDefaultModeTest). */
#include <stdio.h>
#include <stdlib.h>

char big[0x7ff00000L];

int main(void)
{
    big[1] = 1;
    big[0x7fe00000L] = 2;
#ifdef HEAP_OVERFLOW
    volatile int at = 16;
    char *block = malloc(16);
    block[at] = 1;
    free(block);
#endif
    printf("%d\n", big[1] + big[0x7fe00000L]);
    return 0;
}
