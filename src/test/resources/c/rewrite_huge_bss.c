/* A position-dependent executable linked at 0x10000 whose bss ends near 2 GB (RewriteNonPieTest): its
 * trampolines fit neither below its code nor above it within rel32 reach, so rewrite mode refuses it. */
#include <stdio.h>

char big[0x7ff00000L];

int main(void)
{
    big[1] = 1;
    big[0x7fe00000L] = 2;
    printf("%d\n", big[1] + big[0x7fe00000L]);
    return 0;
}
