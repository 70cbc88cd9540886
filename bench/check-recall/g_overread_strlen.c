/* CWE-126 on a global: strlen over an array whose last byte was overwritten (no terminator left). */
#include <string.h>
#include "rc.h"
char label[8] = "label";
char label_after[8] = "";
static void run(size_t n)
{
    memset(label, 'L', rc_n(n));
    rc_int((long)strlen(label)); /* BAD when n is 8 */
}
static void bad(void) { run(8); }
static void good(void) { run(7); }
RC_MAIN
