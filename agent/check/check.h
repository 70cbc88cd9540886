/*
 * check.h: what the files of libmemtrace-check.so (the runtime of `memtrace cc --check`) share.
 *
 *   check_shadow.c  the shadow memory (gcc's -fsanitize=address layout: byte (addr >> 3) + 0x7fff8000 says
 *                   how many of the 8 bytes at addr are addressable) and the __asan_* entry points gcc's
 *                   outline instrumentation calls, plus memtrace's own loop and range checks
 *   check_heap.c    the allocator wrappers: redzones, quarantine, free checks, leaks at exit
 *   check_report.c  the reports of bad accesses, and beside it, one job a file (check_report.h lists them):
 *                   check_misuse.c, check_objects.c, check_sites.c, check_stacks.c, check_output.c and
 *                   check_outcome.c: misused calls' reports, names of objects and code, frames, where reports
 *                   go, the options, continue mode, leaks, the summary, stop or continue
 *   check_libc.c    libc's memory and string functions checked by what they read and write
 *   check_format.c  the printf family, puts, fputs and the wide-string functions, the same way
 *   check_demangle.c C++ names spelled by the system's c++filt for the reports
 *   check_sarif.c   the reports as a SARIF 2.1.0 log
 *   check_block.h   the block, quarantine, leak and shadow logic shared with the agent's run --check
 *
 * Shadow values (the first four are gcc's, which writes them inline for stack frames):
 *   0 all 8 bytes addressable; 1..7 the first k are; 0xf1/0xf2/0xf3 stack left/middle/right redzone;
 *   0xf8 a stack variable out of scope; 0xf9 global redzone; 0xfa heap left redzone (the block's header);
 *   0xfb heap right redzone; 0xfd freed heap memory; 0xf5 a fake frame its function returned from (check_fakestack.c); 0xca alloca redzone (gcc's left and right: 0xca, 0xcb);
 *   0xfe the first 64 KB of the address space (never mapped: mmap_min_addr), so a NULL dereference in checked
 *   code is reported before it faults.
 */
#ifndef MEMTRACE_CHECK_H
#define MEMTRACE_CHECK_H

#include <stddef.h>
#include <stdint.h>

#define MC_EXPORT __attribute__((visibility("default")))

/* gcc's descriptor of one instrumented global (its ASan ABI, version 8): registered by a module's
 * constructor (check_shadow.c), named in reports (check_objects.c), told apart from symbols (check_symglobals.c) */
struct asan_location { const char *file; int line, column; };
struct asan_global {
    uintptr_t beg;
    size_t size, size_with_redzone;
    const char *name, *module_name;
    uintptr_t has_dynamic_init;
    struct asan_location *location;
    uintptr_t odr_indicator;
};
#define MC_SHADOW_OFFSET 0x7fff8000ULL
#define MC_SHADOW_END 0x10007fff8000ULL       /* the shadow is [MC_SHADOW_OFFSET, MC_SHADOW_END) */
#define MC_SHADOW(a) ((uint8_t *)(((uintptr_t)(a) >> 3) + MC_SHADOW_OFFSET))
/* The shadow's own shadow (no valid address has it): run --check's fault mode makes it inaccessible, as ASan's */
/* shadow gap, so that a wild pointer there faults instead of writing silently. (The compiled-in runtime does   */
/* not: its checked memset, which poisons the shadow, reads the shadow's shadow.) */
#define MC_SHADOW_GAP_START ((uintptr_t)MC_SHADOW(MC_SHADOW_OFFSET))
#define MC_SHADOW_GAP_END ((uintptr_t)MC_SHADOW(MC_SHADOW_END))

enum {
    MC_STACK_LEFT = 0xf1, MC_STACK_MID = 0xf2, MC_STACK_RIGHT = 0xf3, MC_STACK_SCOPE = 0xf8, MC_STACK_RETURNED = 0xf5,
    MC_GLOBAL_RZ = 0xf9, MC_HEAP_LEFT = 0xfa, MC_HEAP_RIGHT = 0xfb, MC_HEAP_FREED = 0xfd,
    MC_ALLOCA_LEFT = 0xca, MC_ALLOCA_RIGHT = 0xcb, MC_NULL_PAGE = 0xfe,
};

/* What an access did, for the report: read, write, or a libc function's whole range. */
enum mc_access { MC_READ, MC_WRITE };

/* Allocation families, for mismatch checks: which release goes with which allocation. */
enum mc_family { MC_MALLOC, MC_NEW, MC_NEW_ARRAY };

/* The header of a heap block: the last 64 bytes of its left redzone, right before the user's pointer. */
struct mc_block {
    uint32_t magic;        /* MC_LIVE or MC_QUARANTINED */
    uint32_t number;       /* the process's allocation counter, as memtrace names blocks: <malloc0002@...> */
    uint64_t size;         /* the size the program asked for */
    void *chunk;           /* what __libc_memalign returned */
    const void *alloc_pc;  /* return address of the allocating call */
    const void *free_pc;   /* return address of the freeing call */
    struct mc_block *prev, *next; /* the live list, or the quarantine (next only) */
    uint8_t family, fn;    /* enum mc_family; which function: 0 malloc, 1 calloc, 2 realloc, 3 aligned, 4 new */
    uint16_t arena_class;  /* check_heap.c: its arena size class + 1; 0 for a chunk of glibc's */
    uint32_t tid;          /* the allocating thread */
};
#define MC_LIVE 0x4d544c56u
#define MC_QUARANTINED 0x4d545146u

/* check_shadow.c */
void mc_init(void);
void mc_poison(uintptr_t addr, size_t size, uint8_t value);   /* addr 8-aligned; size rounded up */
void mc_unpoison(uintptr_t addr, size_t size);                /* addr 8-aligned; a partial last granule */
uintptr_t mc_first_bad(uintptr_t addr, size_t size);          /* first unaddressable byte, or 0 */

/* Whether the shadow passes [a, a+n) (n > 0) at a glance: the shadow bytes of its granules read eight (64 bytes of
 * the range) a word, every granule but the last wholly addressable (0), the last 0 or addressable up to the
 * range's end (a string's block of 10 bytes). Otherwise (a poisoned byte, a range starting in a partial granule)
 * the exact test decides. The last word may reach 7 bytes past the range's shadow: the shadow is one mapping, and
 * the top of the address space is left to the exact test. Before, a range over 57 bytes (8 granules) always took
 * the exact test, a call: mc_first_bad, called by the libc wrappers, gcc's checks of odd sizes and the
 * input functions, was 1 % of sqlite3's checked run (bench/results/check.md, 2026-12-07 20:35). */
static inline __attribute__((always_inline)) int mc_shadow_clean(uintptr_t a, size_t n)
{
    uintptr_t e = a + n - 1;
    if (e < a || e > ((uintptr_t)1 << 47) - 128) return 0;
    const uint8_t *s = MC_SHADOW(a);
    uintptr_t k = (e >> 3) - (a >> 3);                   /* granules - 1 */
    for (; k > 7; k -= 8, s += 8)
        if (*(const uint64_t __attribute__((may_alias, aligned(1))) *)s) return 0;
    uint64_t w = *(const uint64_t __attribute__((may_alias, aligned(1))) *)s;
    int8_t last = (int8_t)(w >> (8 * k));
    return (w & ((1ULL << (8 * k)) - 1)) == 0 && (last == 0 || last > (int8_t)(e & 7));
}
int mc_addressable_range(uintptr_t addr);                      /* whether addr has a shadow byte at all */

/* check_heap.c */
struct mc_block *mc_block_of(uintptr_t addr, int *inside);     /* the block an address is in or next to */
void mc_leak_check(void);
/* the live block whose requested bytes hold p, looked for at most limit bytes back; NULL when none */
const struct mc_block *mc_live_block(uintptr_t p, size_t limit);
/* the arena glibc's mallocs go to while a stream scanf runs on this thread (check_scan.h), else NULL */
struct mc_arena;
extern __thread struct mc_arena *mc_arena_now __attribute__((tls_model("initial-exec")));

/* check_fakestack.c: fake frames (stack use after return); the base of the one an address is in, or 0; the
 * leak scan's roots in the frames in use */
uintptr_t mc_fake_frame_of(uintptr_t addr) __attribute__((weak));
void mc_fake_frames_scan(void (*scan)(void *s, uintptr_t from, uintptr_t to), void *s);
/* check_shadow.c: the arguments of threads pthread_create made that have not started yet (leak roots) */
void mc_thread_starts_scan(void (*scan)(void *s, uintptr_t from, uintptr_t to), void *s);
void mc_threads_each(void (*each)(uintptr_t tp, void *arg), void *arg);  /* running threads' thread pointers */
extern int __asan_option_detect_stack_use_after_return __attribute__((weak));

/* check_libc.c: a _FORTIFY_SOURCE _chk function given a length n over the destination size dl gcc knew */
void mc_fortify_fail(void *d, size_t n, size_t dl, const void *pc, const char *fn);

/* check_callers.c: the first caller of pc that is not the C++ library's allocation plumbing (pc when pc is the */
/* program's own); fp is the frame of the runtime's wrapper that returns to pc                                */
const void *mc_user_frame(const void *pc, uintptr_t fp);
/* check_sites.c: 1 when the function holding code address pc is the C++ library's allocation plumbing      */
/* (std::, __gnu_cxx::, operator new and delete, by its symbol), 0 when it is not, -1 when no symbol names it */
int mc_plumbing(uintptr_t pc);
int mc_plumbing_known(uintptr_t pc);                            /* the same from its cache alone; -2: not known */
int mc_plumbing_name(const char *name);

/* check_report.c, check_misuse.c, check_outcome.c (leaks): one report; returns when the run goes on. */
void mc_report_access(uintptr_t addr, size_t size, enum mc_access access, const void *pc, const char *by);
void mc_report_loop(uintptr_t bad, size_t size, enum mc_access access, const void *pc, uintptr_t span_lo, uintptr_t span_hi);
/* an access at addr, addressable, outside the live block b its pointer came from: inside another object */
void mc_report_into(const struct mc_block *b, uintptr_t addr, size_t size, enum mc_access access, const void *pc, const char *by);
extern __thread const uint64_t *mc_frames __attribute__((tls_model("initial-exec"))); /* run --check --stack-depth */
extern __thread int mc_nframes __attribute__((tls_model("initial-exec")));
extern __thread int mc_frame0_return __attribute__((tls_model("initial-exec"))); /* the site is a return address */
extern int mc_stack_depth;   /* frames a report names (check_stacks.c): MEMTRACE_STACK_DEPTH, --stack-depth */
void mc_report_smash(uintptr_t slot, uintptr_t target, const void *pc, const char *fn);
struct mc_extent { uintptr_t beg; size_t size; const char *region; char name[256]; char desc[512]; };
void mc_report_extent(uintptr_t addr, size_t size, enum mc_access access, const void *pc, const char *by,
                      const struct mc_extent *x);
/* run --check --mode rewrite: a libc function's range that the shadow passed, against the executable's stack */
/* variable it lies in (check_stackvars.c, from MEMTRACE_CHECK_FRAMES; nothing without that table)           */
void mc_stackvars_init(void);
void mc_symglobals_init(void);                                 /* run --check --mode rewrite: globals' padding */
/* the same, a range that starts in a global read from .symtab and runs past its end; 1 when reported */
int mc_symglobal_check(uintptr_t p, size_t n, enum mc_access access, const void *pc, const char *by);
const char *mc_stackvars_function(uintptr_t pc);               /* the table's function holding pc, or NULL */
int mc_read_word(uint64_t *w, uintptr_t at);                   /* 0 when the 8 bytes at `at` could be read */
void mc_check_stack_var(uintptr_t p, size_t n, enum mc_access access, const void *pc, const char *by);
/* a rewrite run (mc_stackvars_init ran; mc_symglobals_init runs with it): only then has mc_check_stack_var a
 * table or globals to check against, so the wrappers test this first and a --check build makes no call (its
 * 3.8 M libc calls in bench/check.sh's sqlite3 workload paid two calls with 800-byte frames each) */
extern int mc_rewritten;
int mc_fortify_stack(uintptr_t d, size_t n, size_t dl, const void *pc, const char *by);
void mc_report_segv(uintptr_t addr, int known, size_t size, enum mc_access access, const void *pc, const char *why);
void mc_report_free(const char *kind, uintptr_t ptr, const struct mc_block *b, const void *pc, const char *what);
void mc_report_leaks(size_t blocks, size_t bytes, const struct mc_block *const *sites, const size_t *counts,
                     const size_t *site_bytes, size_t nsites);
void mc_report_field(uintptr_t d, size_t n, size_t field, const void *pc, const char *by);
void mc_report_overlap(uintptr_t dst, uintptr_t src, size_t n, const void *pc, const char *fn);
void mc_note_global(const void *g);                              /* a gcc __asan_global descriptor */
void mc_forget_globals(const void *g, size_t n);
extern int mc_continue;                                         /* MEMTRACE_CHECK=continue */
extern int mc_leaks_on;

/* check_sarif.c: the reports as a SARIF 2.1.0 log (MEMTRACE_CHECK_SARIF); a site is code "bad+115", line "x.c:39" or NULL */
struct mc_site_ref { const char *code, *line, *function; int inlined; };  /* function, inlined: a stack's frames */
int mc_sarif_init(const char *file);                             /* -1: it exists or cannot be created */
void mc_log_failed(const char *what, const char *path, int err); /* one line, once per log: "JSON" or "SARIF" */
void mc_log_path(char *out, size_t n, const char *file);         /* a log's absolute path (check_output.c) */
void mc_sarif_stack(const struct mc_site_ref *frames, int n);  /* the next result's stack (run --check --stack-depth) */
/* the next result's allocating and freeing calls' frames, when inlined code made them (n 0: none) */
void mc_sarif_block_stacks(const struct mc_site_ref *alloc, int nalloc, const struct mc_site_ref *freed, int nfreed);
void mc_sarif_result(const char *rule, const char *line, struct mc_site_ref at, struct mc_site_ref allocated,
                     struct mc_site_ref freed);

/* check_demangle.c: a C++ symbol's source spelling by the system's c++filt (the name itself when not mangled) */
const char *mc_spell(const char *name);
const char *mc_spell_function(const char *name);     /* spelled, without a template function's return type */
const char *mc_skip_return_type(const char *demangled);
extern int mc_keep_mangled;                                     /* MEMTRACE_CHECK=mangled */

/* counters of the run, summed over threads (check_shadow.c) */
struct mc_counts { uint64_t checks, accesses, loop_checks, range_checks, libc_checks; };
/* a libc function checked for its caller at pc: counted unless memtrace's own code called it (the runtime's
 * reports and start-up, the tracing runtime beside it in a rewrite run), whose calls bind to these wrappers */
void mc_count_libc(const void *pc);
void mc_count_libc_n(const void *pc, unsigned n);   /* n ranges of one call (memcpy's two) */
void mc_counts_total(struct mc_counts *out);
void mc_stop(void) __attribute__((noreturn));   /* stop after a report whose caller cannot go on */
void mc_counts_stopped(void);   /* a report stops the program: the checks its run did not reach are not counted */

#endif
