/*
 * check_output.c: where the checker's reports go (check_report.h lists the files that make them): the line for
 * people to standard error, after the program's own buffered output, and the same facts as one JSON object a
 * line to MEMTRACE_CHECK_JSON's file, reopened for each record (O_APPEND), so that no descriptor of the
 * program's is taken between reports. A program that closes its stderr stream (coreutils' close_stdout, run
 * by atexit before the leak check) has the runtime keep a copy of descriptor 2 first, high and close-on-exec,
 * and reports go there while it is still the file kept.
 *
 * Output: the lines and records the other files build (mc_put, mc_put_json), written whole; a log that cannot
 * be written (a full disk) is said once, as
 *   memtrace: check: cannot write the JSON log /tmp/x.json (it is incomplete): No space left on device
 *
 * What it gets wrong: a program that puts a file of its own on the kept copy's number (dup2) loses the reports
 * from then on (never written into its file); a program that closes descriptor 2 without fclose(stderr) is not
 * seen, and the reports after it are lost.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "mt_common.h"
#include "check_report.h"

/* MEMTRACE_CHECK_JSON's file, absolute, or empty */
static char json_path[4096];

void mc_put(struct mc_out *o, const char *fmt, ...)
{
    if (o->len >= o->n) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(o->buf + o->len, o->n - o->len, fmt, ap);
    va_end(ap);
    if (k > 0) o->len = o->len + (size_t)k < o->n ? o->len + (size_t)k : o->n - 1;
}

/* a JSON string of s's first max bytes at most: the names memtrace makes need only quotes and backslashes
 * escaped, control bytes as \u */
void mc_put_json_n(struct mc_out *o, const char *s, size_t max)
{
    mc_put(o, "\"");
    for (size_t i = 0; s[i] && i < max; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') mc_put(o, "\\%c", c);
        else if (c < 0x20) mc_put(o, "\\u%04x", c);
        else mc_put(o, "%c", c);
    }
    mc_put(o, "\"");
}

/* a JSON string, or null */
void mc_put_json(struct mc_out *o, const char *s)
{
    if (!s) mc_put(o, "null");
    else mc_put_json_n(o, s, SIZE_MAX);
}

/* 0 when all n bytes were written, else -1 with errno set (a short write past a full disk: ENOSPC) */
int mc_write_all(int fd, const char *s, size_t n)
{
    while (n) {
        ssize_t k = write(fd, s, n);
        if (k <= 0) {
            if (k == 0) errno = ENOSPC;
            return -1;
        }
        s += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Where reports go: standard error, or the copy of it kept when the program closed its stderr stream
 * (mc_keep_stderr): coreutils' close_stdout, run by atexit before the leak check, closes descriptor 2, and
 * the leak report (status 23) would be lost without a word. */
static volatile int report_fd = 2;
/* the kept copy's file: a program may put a file of its own on that number later (dup2), and a report must
 * never go into it */
static dev_t report_dev;
static ino_t report_ino;

/* The descriptor a report is written on now: 2, or the kept copy while it is still the file kept; -1 when the
 * program took the number (the report is then lost, never written into the program's file). */
int mc_report_out(void)
{
    if (report_fd == 2) return 2;
    struct stat s;
    return fstat(report_fd, &s) == 0 && s.st_dev == report_dev && s.st_ino == report_ino ? report_fd : -1;
}

/* A copy of descriptor 2 at the highest free number below min(RLIMIT_NOFILE, 1024) (out of the way of a
 * program that opens files lowest-first, as rt_fd.c keeps the trace's), close-on-exec; taken only when the
 * program is about to close its stderr, so that a program that never does keeps every number it had. */
static void mc_keep_stderr(void)
{
    if (report_fd != 2 || fcntl(2, F_GETFD) < 0) return;
    int fd = mt_dup_high(2);
    struct stat s;
    if (fd < 0) return;
    if (fstat(fd, &s) != 0) {
        close(fd);
        return;
    }
    report_dev = s.st_dev;
    report_ino = s.st_ino;
    report_fd = fd;
}

/* The program's fclose(stderr): the runtime keeps its copy first (above), then libc's fclose runs. */
MC_EXPORT int fclose(FILE *f)
{
    static int (*real_fclose)(FILE *);
    if (!real_fclose) real_fclose = (int (*)(FILE *))dlsym(RTLD_NEXT, "fclose");
    if (f == stderr) mc_keep_stderr();
    return real_fclose(f);
}

/* A report that did not reach its log file (a full disk): said once per log, as one line, so that a user never
 * takes a log cut short for a complete one. */
void mc_log_failed(const char *what, const char *path, int err)
{
    static int said_json, said_sarif;
    int *said = what[0] == 'J' ? &said_json : &said_sarif;
    if (*said) return;
    *said = 1;
    char msg[600];
    int k = snprintf(msg, sizeof msg, "memtrace: check: cannot write the %s log %s (it is incomplete): %s\n", what, path, strerror(err));
    int out = mc_report_out();
    if (out >= 0) mc_write_all(out, msg, (size_t)k < sizeof msg ? (size_t)k : sizeof msg - 1);
}

void mc_emit(struct mc_out *line, struct mc_out *json)
{
    mc_put(line, "\n");
    fflush(stdout);           /* the program's own output first: a report never hides it */
    int out = mc_report_out();
    if (out >= 0) mc_write_all(out, line->buf, line->len);
    if (json_path[0]) {
        /* opened for each record, so that no descriptor of the program's is taken between them */
        int fd = open(json_path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0) {
            mc_put(json, "}\n");
            if (mc_write_all(fd, json->buf, json->len) != 0) mc_log_failed("JSON", json_path, errno);
            close(fd);
        } else {
            mc_log_failed("JSON", json_path, errno);
        }
    }
}

/* ", at x.c:39 (bad+115), thread 8104": the line's site, and the thread */
void mc_put_at(struct mc_out *l, const char *code, const char *line)
{
    if (line) mc_put(l, ", at %s (%s)", line, code); else mc_put(l, ", at %s", code);
    mc_put(l, ", thread %d", gettid());
}

/* Creates the JSON log (never over an existing file); 0, or -1 with errno set. */
int mc_json_log(const char *json)
{
    int fd = open(json, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 || strlen(json) >= sizeof json_path) return -1;
    close(fd);
    mc_log_path(json_path, sizeof json_path, json);
    return 0;
}

/* A log's path as the runtime keeps it: absolute, so that a chdir of the program's does not move the file (as
 * given when the working directory is not known or the whole is too long). */
void mc_log_path(char *out, size_t n, const char *file)
{
    if (file[0] != '/' && getcwd(out, n) && strlen(out) + strlen(file) + 2 < n) {
        strcat(out, "/");
        strcat(out, file);
    } else {
        snprintf(out, n, "%s", file);
    }
}
