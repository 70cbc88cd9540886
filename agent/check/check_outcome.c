/*
 * check_outcome.c: what a checked run comes to (check_report.h lists the files that make the reports): the
 * options, each error counted, the stop after the first (or, in continue mode, each distinct error reported
 * once, by kind and code site, and the run going on), the leak report and the summary at exit, and the exit
 * status.
 *
 * Options (environment, read once at start): MEMTRACE_CHECK=continue[,summary][,noleaks][,mangled][,globals]
 * [,noreturn] (report each distinct error once and go on; the summary is then printed at exit when the run
 * reported something: a run that found nothing prints nothing the program did not, as ASan's
 * halt_on_error=0), MEMTRACE_CHECK=summary (the summary always, also of a clean run),
 * MEMTRACE_CHECK_EXITCODE=N (default 1; leaks alone exit 23, as LeakSanitizer), MEMTRACE_CHECK_QUARANTINE=BYTES,
 * MEMTRACE_CHECK_JSON=FILE (created, never overwritten: an existing file is refused with a line),
 * MEMTRACE_CHECK_SARIF=FILE (the same, as a SARIF 2.1.0 log: check_sarif.c), MEMTRACE_STACK_DEPTH=N.
 *
 * Output: per allocating call of unreachable blocks
 *   memtrace: leak: <malloc0001@main+20> (a block of 40 bytes, allocated at x.c:5) unreachable at exit, with 2
 *   more blocks from the same call, 120 bytes in all
 * then "memtrace: leaks: 3 blocks, 120 bytes, from 1 call"; and "memtrace: check summary: N accesses checked by
 * M checks (...); statically ...; E errors", also as a JSON record.
 *
 * What it gets wrong: continue mode remembers 4096 distinct errors; past them each is reported every time it
 * happens. An error at a site seen before with another kind is a new one (a loop's overflow, then its use
 * after free, both said).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "check_report.h"

int mc_continue, mc_leaks_on = 1;
static int summary_on, exit_code = 1, errors;
void mc_set_quarantine(size_t bytes);   /* check_heap.c, check_run.c */
static void summary(void);
static int leaked;

/* Whether the summary line is printed: always when asked (`summary`); in continue mode under the reports a run
 * printed, never after a clean run, whose stderr stays the program's own (test suites compare it with an empty
 * file; ASan's halt_on_error=0 is as silent) */
static int want_summary(void)
{
    return summary_on || (mc_continue && (errors || leaked));
}

/* A report whose caller cannot go on (gcc's noreturn __asan_report_*): stop as a first error stops, also in
 * continue mode. */
void mc_stop(void)
{
    mc_counts_stopped();
    if (want_summary()) summary();
    fflush(NULL);
    _exit(exit_code);
}

/* After a report: counted; the program stops there unless in continue mode. */
void mc_finish_error(void)
{
    errors++;
    if (!mc_continue) mc_stop();
}

/* After the report of a signal that kills the program next (it is not stopped here): counted, and the summary
 * printed when it would be at exit. */
void mc_count_dying_error(void)
{
    errors++;
    if (want_summary()) summary();
}

/* continue mode: an error of one kind at one code site is reported once (whether it was, else noted now) */
int mc_said_before(const char *kind, const void *pc)
{
    static struct { const char *kind; const void *pc; } done[4096];
    static int ndone;
    if (!mc_continue) return 0;
    for (int i = 0; i < ndone; i++)
        if (done[i].pc == pc && strcmp(done[i].kind, kind) == 0) return 1;
    if (ndone < 4096) { done[ndone].kind = kind; done[ndone].pc = pc; ndone++; }
    return 0;
}

/* A heap block unreachable at exit, one report per allocating call (the others from it counted in the line),
 * then one line for them all (not in the JSON log). */
void mc_report_leaks(size_t blocks, size_t bytes, const struct mc_block *const *sites, const size_t *counts,
                     const size_t *site_bytes, size_t nsites)
{
    pthread_mutex_lock(&mc_report_lock);
    for (size_t i = 0; i < nsites; i++) {
        struct mc_object o;
        memset(&o, 0, sizeof o);
        mc_describe_block(sites[i], &o);
        char lbuf[8192], jbuf[8192];
        struct mc_out l = {lbuf, sizeof lbuf, 0}, j = {jbuf, sizeof jbuf, 0};
        mc_put(&l, "memtrace: leak: %s (%s) unreachable at exit", o.name, o.desc);
        if (counts[i] > 1)
            mc_put(&l, ", with %lu more block%s from the same call, %lu bytes in all", (unsigned long)(counts[i] - 1),
                mc_plural(counts[i] - 1), (unsigned long)site_bytes[i]);
        char a[1024], aline[MC_LINE_MAX];
        const char *ln;
        mc_block_site(sites[i]->alloc_pc, a, sizeof a, &ln, aline);
        mc_put(&j, "{\"kind\":\"leak\",\"object\":{\"name\":");
        mc_put_json(&j, o.name);
        mc_put(&j, ",\"region\":\"heap\",\"size\":%lu,\"description\":", (unsigned long)o.size);
        mc_put_json(&j, o.desc);
        mc_put_json_site(&j, "allocated", a, ln, MC_NO_FRAMES);
        mc_put(&j, "},\"blocks\":%lu,\"bytes\":%lu", (unsigned long)counts[i], (unsigned long)site_bytes[i]);
        struct mc_site_ref none = {.code = NULL};
        mc_sarif_result("leak", l.buf, (struct mc_site_ref){.code = a, .line = ln}, none, none);
        mc_emit(&l, &j);
    }
    char lbuf[256];
    struct mc_out l = {lbuf, sizeof lbuf, 0};
    mc_put(&l, "memtrace: leaks: %lu block%s, %lu bytes, from %lu call%s", (unsigned long)blocks, mc_plural(blocks),
        (unsigned long)bytes, (unsigned long)nsites, mc_plural(nsites));
    mc_put(&l, "\n");
    int out = mc_report_out();
    if (out >= 0) mc_write_all(out, l.buf, l.len);
    leaked = 1;
    pthread_mutex_unlock(&mc_report_lock);
}

/* "memtrace: check summary: ...": what the checks did at run time (check_shadow.c's counters) and what
 * memtrace cc --check did to them statically (the call-site tables' counts) */
static void summary(void)
{
    struct mc_counts c;
    mc_counts_total(&c);
    struct mc_static st;
    mc_static_counts(&st);
    uint64_t sites = st.checks, kept = st.kept, merged = st.merged, hoisted = st.hoisted, ranges = st.ranges, loops = st.loops;
    char buf[1024], jbuf[1024];
    struct mc_out l = {buf, sizeof buf, 0}, j = {jbuf, sizeof jbuf, 0};
    mc_put(&l, "memtrace: check summary: %lu accesses checked by %lu checks (%lu loop entries, %lu block ranges, "
            "%lu libc calls); statically %lu of %lu checks removed (%lu by loop checks, %lu by block ranges), "
            "%lu added (%lu loop, %lu range); %d error%s",
        (unsigned long)c.accesses, (unsigned long)c.checks, (unsigned long)c.loop_checks, (unsigned long)c.range_checks,
        (unsigned long)c.libc_checks, (unsigned long)(merged + hoisted), (unsigned long)sites, (unsigned long)hoisted,
        (unsigned long)merged, (unsigned long)(ranges + loops), (unsigned long)loops, (unsigned long)ranges, errors,
        mc_plural((size_t)errors));
    mc_put(&j, "{\"kind\":\"summary\",\"accesses\":%lu,\"checks\":%lu,\"loop_checks\":%lu,\"range_checks\":%lu,"
            "\"libc_checks\":%lu,\"static\":{\"checks\":%lu,\"kept\":%lu,\"removed_by_loops\":%lu,"
            "\"removed_by_ranges\":%lu,\"loop_checks\":%lu,\"range_checks\":%lu},\"errors\":%d",
        (unsigned long)c.accesses, (unsigned long)c.checks, (unsigned long)c.loop_checks, (unsigned long)c.range_checks,
        (unsigned long)c.libc_checks, (unsigned long)sites, (unsigned long)kept, (unsigned long)hoisted,
        (unsigned long)merged, (unsigned long)loops, (unsigned long)ranges, errors);
    mc_emit(&l, &j);
}

static void at_exit(void)
{
    if (mc_leaks_on) mc_leak_check();
    if (want_summary()) summary();
    if (leaked || (mc_continue && errors)) {
        fflush(NULL);
        _exit(errors ? exit_code : 23);
    }
}

/* a log that cannot be created at start: one line, and exit status 2 before the program runs */
static void cannot_create(const char *path)
{
    char msg[600];
    int k = snprintf(msg, sizeof msg, "memtrace: check: cannot create %s: %m%s\n", path,
                     errno == EEXIST ? " (memtrace writes no log over an existing file: name a new one)" : "");
    mc_write_all(2, msg, (size_t)k < sizeof msg ? (size_t)k : sizeof msg - 1);
    _exit(2);
}

/* The options, read once at start (check_shadow.c's mc_init): a wrong one is one line and exit status 2. */
void mc_init_report(void)
{
    const char *mode = getenv("MEMTRACE_CHECK");
    if (mode) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", mode);
        for (char *save, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
            if (strcmp(w, "continue") == 0) mc_continue = 1;
            else if (strcmp(w, "stop") == 0) mc_continue = 0;
            else if (strcmp(w, "summary") == 0) summary_on = 1;
            else if (strcmp(w, "noleaks") == 0) mc_leaks_on = 0;
            else if (strcmp(w, "mangled") == 0) mc_keep_mangled = 1;
            else if (strcmp(w, "globals") == 0) {} /* run --check's fault mode reads it (check_globals.c) */
            else if (strcmp(w, "noreturn") == 0) {   /* no fake frames: no stack use after return (check_fakestack.c) */
                if (&__asan_option_detect_stack_use_after_return) __asan_option_detect_stack_use_after_return = 0;
            }
            else {
                char msg[400];
                int k = snprintf(msg, sizeof msg, "memtrace: check: MEMTRACE_CHECK: unknown word '%s' "
                                 "(continue, stop, summary, noleaks, mangled, globals, noreturn)\n", w);
                mc_write_all(2, msg, (size_t)k < sizeof msg ? (size_t)k : sizeof msg - 1);
                _exit(2);
            }
        }
    }
    /* memtrace cc's depth of allocation stacks: 1 keeps each report to its line (no inlined frames) */
    const char *depth = getenv("MEMTRACE_STACK_DEPTH");
    if (depth && atoi(depth) >= 1) mc_stack_depth = atoi(depth);
    const char *code = getenv("MEMTRACE_CHECK_EXITCODE");
    if (code && *code) {
        char *end;
        long v = strtol(code, &end, 10);
        if (*end || v < 0 || v > 255) {
            static const char msg[] = "memtrace: check: MEMTRACE_CHECK_EXITCODE must be 0..255\n";
            mc_write_all(2, msg, sizeof msg - 1);
            _exit(2);
        }
        exit_code = (int)v;
    }
    const char *q = getenv("MEMTRACE_CHECK_QUARANTINE");
    if (q && *q) {
        char *end;
        unsigned long long v = strtoull(q, &end, 10);
        if (*end) {
            static const char msg[] = "memtrace: check: MEMTRACE_CHECK_QUARANTINE must be a number of bytes\n";
            mc_write_all(2, msg, sizeof msg - 1);
            _exit(2);
        }
        mc_set_quarantine((size_t)v);
    }
    const char *json = getenv("MEMTRACE_CHECK_JSON");
    if (json && *json && mc_json_log(json) != 0) cannot_create(json);
    const char *sarif = getenv("MEMTRACE_CHECK_SARIF");
    if (sarif && *sarif && mc_sarif_init(sarif) != 0) cannot_create(sarif);
    atexit(at_exit);
}
