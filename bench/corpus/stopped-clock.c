/* bench/corpus.sh's stopped clock for glpsol, preloaded (LD_PRELOAD) into every build's runs: gettimeofday
 * always says 2020-01-01 00:00:00 UTC.
 * GLPK reads that clock (glp_time) to decide when its simplex (every 0.5 s) and its branch and bound (every
 * 5 s) print a progress line, and computes the objective to print one: a traced run, ten or more times
 * slower than the plain one, would print other lines and make other accesses, and two traced runs (full and
 * skeleton) would differ from each other by the load of the moment. With the clock stopped every build takes
 * the same path and prints the same output; its "Time used" line says 0.0 secs.
 * What it gets wrong: every caller of gettimeofday in the process sees the stopped clock (the memtrace runtime
 * reads CLOCK_MONOTONIC by a system call of its own, not through this), so glpsol's --tmlim never expires. */
#include <stddef.h>
#include <sys/time.h>

int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
    (void) tz;
    if (tv != NULL) {
        tv->tv_sec = 1577836800;
        tv->tv_usec = 0;
    }
    return 0;
}
