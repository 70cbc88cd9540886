/*
 * check_report.h: what the files that make the checker's reports share (check_sarif.c too, which writes them
 * as SARIF through the same buffers), and no other file includes. The reports are the same in `memtrace cc
 * --check`'s runtime and, linked in unchanged, in run --check's fault-mode agent (agent.h); their grammar, as
 * a line and as JSON, is docs/check.md's. One job a file:
 *   check_sites.c    code named: "bad+115" and "x.c:39" by the call-site tables memtrace cc --check puts in each
 *                    object, else .symtab (check_names.c), dladdr, module+offset; the C++ library's plumbing
 *   check_objects.c  what an address is (a heap block, a global, a stack variable, an alloca) and so which
 *                    kind of error an access there is
 *   check_stacks.c   the frames under a report (--stack-depth, inlined calls) and a block's allocating site
 *   check_report.c   the reports of bad accesses: the shadow's, known extents', stray signals', smashed returns'
 *   check_misuse.c   the reports of calls misused: free/delete/realloc, intra-object writes, overlapping copies
 *   check_output.c   where a report goes: standard error (or the copy kept when the program closed it), the
 *                    JSON log
 *   check_outcome.c  the options, each error counted (continue mode: each kind at each site once), the stop,
 *                    the leak report, the summary and the exit status
 * Every report is made under mc_report_lock, so the static buffers below (a report's frames) are one report's.
 *
 * What it gets wrong: a report's line and JSON record are built in 8 KB buffers; a longer one is cut.
 */
#ifndef MEMTRACE_CHECK_REPORT_H
#define MEMTRACE_CHECK_REPORT_H

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "check.h"

/* the runtime's own messages are formatted by libc, not by the checked wrappers (check_format.c) */
int mc_snprintf(char *d, size_t n, const char *fmt, ...);
int mc_vsnprintf(char *d, size_t n, const char *fmt, va_list ap);
#define snprintf mc_snprintf
#define vsnprintf mc_vsnprintf

/* held while a report is made, and while the call-site tables change (check_report.c) */
extern pthread_mutex_t mc_report_lock;

/* ---- check_output.c ---- */
struct mc_out { char *buf; size_t n, len; };
__attribute__((format(printf, 2, 3))) void mc_put(struct mc_out *o, const char *fmt, ...);
void mc_put_json(struct mc_out *o, const char *s);              /* a JSON string, or null */
void mc_put_json_n(struct mc_out *o, const char *s, size_t max);  /* of max bytes at most */
/* the line's end: ", at x.c:39 (bad+115), thread 8104" (", at bad+115" without a line) */
void mc_put_at(struct mc_out *l, const char *code, const char *line);
int mc_write_all(int fd, const char *s, size_t n);               /* 0, or -1 with errno */
int mc_report_out(void);                                         /* the descriptor reports go to, or -1 */
void mc_emit(struct mc_out *line, struct mc_out *json);          /* the line to stderr, the record to the log */
int mc_json_log(const char *path);                               /* MEMTRACE_CHECK_JSON's file: 0, or -1 */
static inline const char *mc_plural(size_t n) { return n == 1 ? "" : "s"; }

/* ---- check_sites.c ---- */
#define MC_LINE_MAX 512   /* a "file:line" named by the DWARF line table */
/* code pc named "bad+115" into code, its line (when known) into *line, which may point into lbuf */
void mc_name_code(const void *pc, int ret, char *code, size_t n, const char **line, char *lbuf);
void mc_where(const void *pc, char *out, size_t n);              /* "x.c:28" when known, else "bad+26" */
const char *mc_site_function(const void *pc);                    /* the function a code address lies in */
int mc_through(const void *pc, char *out, size_t n);             /* the C++ library function a call went to */
struct mc_static { uint64_t checks, kept, merged, hoisted, ranges, loops; };
void mc_static_counts(struct mc_static *s);                      /* memtrace cc's counts, summed over objects */
/* The function holding a code address by its module's .symtab, its start into *beg (check_names.c; weak: */
/* the fault-mode agent links it too, a test's runtime may not).                                       */
__attribute__((weak)) const char *mc_code_function(uintptr_t pc, uintptr_t *beg);
/* "file:line" of an address of the executable, by its DWARF line table (check_stackvars.c, check_locals.c) */
__attribute__((weak)) const char *check_line_of(uintptr_t pc);

/* ---- check_objects.c ---- */
struct mc_object {
    const char *kind;            /* the error's kind: "heap overflow", ... */
    const char *json_kind;
    char name[1280];              /* the object: <malloc0002@bad+26>, g, <stack:buf@bad> */
    char desc[2048];              /* "a block of 50 bytes, allocated at x.c:28" */
    const char *region;          /* heap, global, stack */
    long offset;                 /* of the address from the object's start */
    long distance;               /* past the end (>= 0), before the start (< 0 stored as -n), 0 inside */
    size_t size;
    int known;
    const struct mc_block *block;
    const char *into;            /* the other object an addressable access landed in (mc_report_into), or NULL */
};
void mc_classify(uintptr_t bad, struct mc_object *o);            /* the object and the error's kind */
void mc_describe_block(const struct mc_block *b, struct mc_object *o);
int mc_global_object(uintptr_t addr, struct mc_object *o);       /* 1 when addr is in a global or its redzone */
int mc_stack_object(uintptr_t addr, struct mc_object *o);        /* 1 when in or near a variable of a frame */
int mc_alloca_object(uintptr_t addr, struct mc_object *o);
void mc_null_object(uintptr_t addr, struct mc_object *o);        /* the page at 0 */
void mc_object_in(uintptr_t addr, struct mc_object *o);          /* a checked object's bytes, else hex */
void mc_name_any(uintptr_t addr, char *out, size_t n);           /* a block, global, variable+offset, else hex */
void mc_object_address(const struct mc_object *o, char *out, size_t n);  /* "name+offset", or the name */
void mc_put_json_object(struct mc_out *j, const struct mc_object *o);   /* "address" and "object", left open */

/* ---- check_stacks.c ---- */
int mc_site_ret(void);                                           /* whether the report's site is a return address */
void mc_name_frames(const void *pc);                             /* the access's frames */
/* a block's allocating and (freed) freeing call, named for JSON and SARIF; their frames, when inlined */
struct mc_block_sites {
    char a[1024], f[1024], aline[MC_LINE_MAX], fline[MC_LINE_MAX];
    struct mc_site_ref allocated, freed;                         /* freed.code NULL: not freed */
};
void mc_name_block_sites(const struct mc_block *b, struct mc_block_sites *s);
void mc_put_frames(struct mc_out *l);                            /* under the line; forgets the block's frames */
void mc_put_json_frames(struct mc_out *j);
/* ,"key":{"code","line"[,"frames"]}: frames MC_NO_FRAMES, or the block's allocating or freeing call's */
enum { MC_NO_FRAMES, MC_ALLOC_FRAMES, MC_FREE_FRAMES };
void mc_put_json_site(struct mc_out *j, const char *key, const char *code, const char *line, int frames);
void mc_block_where(const void *pc, char *out, size_t n);        /* "x.c:49[, through std::...]" */
void mc_block_site(const void *pc, char *code, size_t n, const char **line, char *lbuf);   /* code and line */

/* ---- check_outcome.c ---- */
int mc_said_before(const char *kind, const void *pc);            /* continue mode: this kind at this site, again */
void mc_finish_error(void);                                      /* counted; stops unless continue mode */
void mc_count_dying_error(void);                                 /* counted, the summary said: a signal kills next */

#endif
