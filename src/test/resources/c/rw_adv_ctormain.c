/* rw_adv_ctormain.c: linked with rw_adv_ctorlib.c's library; prints what lib_finish returns (RewriteAdversarialTest). */
#include <stdio.h>
long lib_finish(void);
int main(void)
{
    printf("lib %ld\n", lib_finish());
    return 0;
}
