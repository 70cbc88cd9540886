/* Rewrite mode leaves the program the environment it would have untraced (RewriteRunTest). */
#include <stdio.h>
#include <stdlib.h>
static const char *or_none(const char *v) { return v ? v : "(none)"; }
int main(void) {
    printf("LD_PRELOAD=%s MEMTRACE_REWRITE_PLAN=%s MEMTRACE_LD_PRELOAD=%s\n", or_none(getenv("LD_PRELOAD")),
           or_none(getenv("MEMTRACE_REWRITE_PLAN")), or_none(getenv("MEMTRACE_LD_PRELOAD")));
    return 0;
}
