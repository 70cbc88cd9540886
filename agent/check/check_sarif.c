/*
 * check_sarif.c: the check reports as a SARIF 2.1.0 log (MEMTRACE_CHECK_SARIF=FILE), the format code-review
 * tools (GitHub code scanning, VS Code's SARIF viewer, Sonar) read. One run of tool "memtrace" whose driver
 * lists a rule per report kind (heap-overflow, use-after-free, ..., leak; docs/check.md); one result per report:
 *
 *   {"ruleId": "heap-overflow", "ruleIndex": 0, "level": "error",
 *    "message": {"text": "heap overflow: <malloc0002@bad+26>+50 (...) written 1 byte, ..., thread 8104"},
 *    "locations": [{"physicalLocation": {"artifactLocation": {"uri": "x.c", "uriBaseId": "%SRCROOT%"},
 *                                        "region": {"startLine": 39}},
 *                   "logicalLocations": [{"fullyQualifiedName": "bad+115"}]}],
 *    "relatedLocations": [{"id": 1, "message": {"text": "allocated"}, "physicalLocation": ..., "logicalLocations": ...},
 *                         {"id": 2, "message": {"text": "freed"}, ...}]}
 *
 * The message is the report's line without "memtrace: "; the location is the access, free or copy (a leak's is
 * its allocating call); related locations are the block's allocation and free sites; with frames (memtrace run
 * --check --stack-depth N) the result has one "stacks" entry, {"frames": [{"location": ...}, ...]} innermost
 * first, each location a physical one when the frame's file:line is known, its logical locations the code name
 * and {"name": function, "kind": "function"} when the function is known, an inlined function's frame with
 * "properties": {"inlined": true}; when the block's allocating or freeing call lies in inlined code, a stack
 * {"message": {"text": "allocated"|"freed"}, "frames": [...]} of its inlined frames follows. A site without a line
 * (no -g, memtrace run --check) has only its logical location, the code name. A relative source path is
 * relative to %SRCROOT% (the build directory: gcc's .file names), an absolute one is a file:// URI.
 *
 * The file is created at start (O_EXCL|O_NOFOLLOW: an existing file is refused with one line and status 2,
 * never overwritten) holding a log with no results, and it is a whole SARIF document after every report: a
 * result is written over the closing "\n]}]}\n" followed by it again, under an flock, so that fork children
 * reporting into the same file add their results too. Opened per report: no descriptor of the program's taken.
 *
 * What it gets wrong: no "invocations" (exit status, end time) and no summary: a process stopped by a report
 * never gets back to write them; the artifact paths are gcc's, relative to the directory gcc ran in.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <errno.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "check_report.h"

static char path[4096];

static const char *const rules[][2] = {
    {"heap-overflow", "a read or write past the end of a heap block (its requested size)"},
    {"heap-underflow", "a read or write before the start of a heap block"},
    {"use-after-free", "a read or write of a heap block after it was freed"},
    {"stack-overflow", "a read or write past the end of a stack variable or alloca"},
    {"stack-underflow", "a read or write before the start of a stack variable or alloca"},
    {"stack-use-after-scope", "a read or write of a stack variable outside its scope"},
    {"stack-use-after-return", "a read or write of a stack variable after its function returned"},
    {"global-overflow", "a read or write past the end of a global or static variable"},
    {"global-underflow", "a read or write before the start of a global or static variable"},
    {"null-dereference", "a read or write of the page at address 0"},
    {"wild-access", "a read or write of memory no object owns"},
    {"double-free", "a heap block freed twice"},
    {"invalid-free", "a free of memory that is not the start of a live heap block"},
    {"allocator-mismatch", "a block released by a function of another allocator family (malloc/delete, new[]/delete)"},
    {"overlap", "a copy between overlapping ranges (memcpy, strcpy, strcat, ...)"},
    {"leak", "a heap block unreachable at exit"},
    {"intra-object-overflow", "a write past a struct member into the rest of its object (_FORTIFY_SOURCE builds)"},
};
#define NRULES (sizeof rules / sizeof rules[0])
static const char TAIL[] = "\n]}]}\n";

/* a path as a URI reference: every byte but unreserved ones and '/' percent-encoded */
static void add_uri(struct mc_out *b, const char *file, size_t len)
{
    mc_put(b, "\"%s", file[0] == '/' ? "file://" : "");
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)file[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_'
            || c == '~' || c == '/')
            mc_put(b, "%c", c);
        else
            mc_put(b, "%%%02X", c);
    }
    mc_put(b, "\"");
}

/* 0 when all n bytes were written at `at`, else -1 with errno set (a full disk: ENOSPC) */
static int write_all(int fd, const char *s, size_t n, off_t at)
{
    while (n) {
        ssize_t k = pwrite(fd, s, n, at);
        if (k <= 0) {
            if (k == 0) errno = ENOSPC;
            return -1;
        }
        s += k;
        n -= (size_t)k;
        at += k;
    }
    return 0;
}

int mc_sarif_init(const char *file)
{
    int fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 || strlen(file) >= sizeof path - 1) {
        if (fd >= 0) close(fd);
        return -1;
    }
    char head[8192];
    struct mc_out b = {head, sizeof head, 0};
    mc_put(&b, "{\"$schema\":\"https://json.schemastore.org/sarif-2.1.0.json\",\"version\":\"2.1.0\",\"runs\":[{\"tool\":{\"driver\":"
            "{\"name\":\"memtrace\",\"rules\":[");
    for (size_t i = 0; i < NRULES; i++)
        mc_put(&b, "%s\n{\"id\":\"%s\",\"shortDescription\":{\"text\":\"%s\"},\"defaultConfiguration\":{\"level\":\"error\"}}",
            i ? "," : "", rules[i][0], rules[i][1]);
    mc_put(&b, "]}},\"columnKind\":\"utf16CodeUnits\",\"results\":[%s", TAIL);
    if (write_all(fd, head, b.len, 0) != 0) {
        /* no log at all rather than an empty file that no SARIF reader takes (the caller says why and stops) */
        int err = errno;
        close(fd);
        unlink(file);
        errno = err;
        return -1;
    }
    close(fd);
    mc_log_path(path, sizeof path, file);
    return 0;
}

/* a location: the file:line when known, and always the code's name */
static void add_location(struct mc_out *b, struct mc_site_ref s)
{
    const char *colon = s.line ? strrchr(s.line, ':') : NULL;
    if (colon && colon > s.line && colon[1]) {
        mc_put(b, "\"physicalLocation\":{\"artifactLocation\":{\"uri\":");
        add_uri(b, s.line, (size_t)(colon - s.line));
        if (s.line[0] != '/') mc_put(b, ",\"uriBaseId\":\"%%SRCROOT%%\"");
        mc_put(b, "},\"region\":{\"startLine\":%s}},", colon + 1);
    }
    mc_put(b, "\"logicalLocations\":[{\"fullyQualifiedName\":");
    mc_put_json_n(b, s.code ? s.code : "?", 4096);
    mc_put(b, "}");
    if (s.function) {
        /* a stack frame's function (an inlined one's code is the function it was inlined into) */
        mc_put(b, ",{\"name\":");
        mc_put_json_n(b, s.function, 4096);
        mc_put(b, ",\"kind\":\"function\"}");
    }
    mc_put(b, "]");
}

/* one "stacks" entry: the frames innermost first, an inlined one with "properties": {"inlined": true} */
static void add_stack(struct mc_out *b, const char *message, const struct mc_site_ref *frames, int n)
{
    mc_put(b, "{");
    if (message) mc_put(b, "\"message\":{\"text\":\"%s\"},", message);
    mc_put(b, "\"frames\":[");
    for (int k = 0; k < n; k++) {
        mc_put(b, "%s{\"location\":{", k ? "," : "");
        add_location(b, frames[k]);
        mc_put(b, "}%s}", frames[k].inlined ? ",\"properties\":{\"inlined\":true}" : "");
    }
    mc_put(b, "]}");
}

/* the frames of the result mc_sarif_result writes next, as one "stacks" entry (the report's own lock holds) */
static const struct mc_site_ref *stack_frames;
static int stack_n;
void mc_sarif_stack(const struct mc_site_ref *frames, int n)
{
    stack_frames = frames;
    stack_n = n;
}
static const struct mc_site_ref *alloc_frames, *free_frames;
static int alloc_n, free_n;
void mc_sarif_block_stacks(const struct mc_site_ref *alloc, int nalloc, const struct mc_site_ref *freed, int nfreed)
{
    alloc_frames = alloc;
    alloc_n = nalloc;
    free_frames = freed;
    free_n = nfreed;
}

void mc_sarif_result(const char *rule, const char *line, struct mc_site_ref at, struct mc_site_ref allocated,
                     struct mc_site_ref freed)
{
    const struct mc_site_ref *frames = stack_frames;
    int nframes = stack_n, nalloc = alloc_n, nfree = free_n;
    stack_n = alloc_n = free_n = 0; /* only the result they were set for */
    if (!path[0]) return;
    size_t index = 0;
    while (index < NRULES && strcmp(rules[index][0], rule) != 0) index++;
    static char text[32768];
    struct mc_out b = {text, sizeof text, 0};
    mc_put(&b, "\n{\"ruleId\":\"%s\",\"ruleIndex\":%lu,\"level\":\"error\",\"message\":{\"text\":", rule, (unsigned long)index);
    const char *m = strncmp(line, "memtrace: ", 10) == 0 ? line + 10 : line;
    size_t mlen = strcspn(m, "\n");
    mc_put_json_n(&b, m, mlen);
    mc_put(&b, "},\"locations\":[{");
    add_location(&b, at);
    mc_put(&b, "}]");
    int id = 0;
    if (allocated.code) {
        mc_put(&b, ",\"relatedLocations\":[{\"id\":%d,\"message\":{\"text\":\"allocated\"},", ++id);
        add_location(&b, allocated);
        mc_put(&b, "}");
        if (freed.code) {
            mc_put(&b, ",{\"id\":%d,\"message\":{\"text\":\"freed\"},", ++id);
            add_location(&b, freed);
            mc_put(&b, "}");
        }
        mc_put(&b, "]");
    }
    if (nframes > 0 || nalloc > 0 || nfree > 0) {
        mc_put(&b, ",\"stacks\":[");
        int any = 0;
        if (nframes > 0) { add_stack(&b, NULL, frames, nframes); any = 1; }
        if (nalloc > 0) { mc_put(&b, any ? "," : ""); add_stack(&b, "allocated", alloc_frames, nalloc); any = 1; }
        if (nfree > 0) { mc_put(&b, any ? "," : ""); add_stack(&b, "freed", free_frames, nfree); }
        mc_put(&b, "]");
    }
    mc_put(&b, "}%s", TAIL);
    if (b.len >= b.n - 1) return;          /* cut short: better no result than a broken document */
    int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        mc_log_failed("SARIF", path, errno);
        return;
    }
    flock(fd, LOCK_EX);
    struct stat st;
    char before;
    off_t end = fstat(fd, &st) == 0 ? st.st_size - (off_t)(sizeof TAIL - 1) : -1;
    if (end > 0 && pread(fd, &before, 1, end - 1) == 1) {
        if ((before != '[' && write_all(fd, ",", 1, end++) != 0) || write_all(fd, text, b.len, end) != 0)
            mc_log_failed("SARIF", path, errno);
    }
    flock(fd, LOCK_UN);
    close(fd);
}
