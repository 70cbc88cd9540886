/* Runtime test, run with MEMTRACE_AUTOSTART=0: probes before memtrace_start, between start and stop, and
 * after stop; only the middle ones are in the trace. */
#include <stdio.h>
#include <stdlib.h>
#include "memtrace.h"
#include "mt_probe.h"

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100;
    long *a = malloc((size_t)n * sizeof(long));
    printf("ARRAY %lx\n", (unsigned long)a);
    mt_print_sites();
    fflush(stdout);
    for (long i = 0; i < n; i++) MT_STORE8(&a[i], 1);
    memtrace_start();
    for (long i = 0; i < n; i++) MT_STORE8(&a[i], 2);
    memtrace_stop();
    for (long i = 0; i < n; i++) MT_STORE8(&a[i], 3);
    free(a);
    return 0;
}
