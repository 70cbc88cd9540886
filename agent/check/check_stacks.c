/*
 * check_stacks.c: the frames under a checker's report (check_report.h lists the files that make the reports),
 * and the site a heap block's description gives for its allocating and freeing calls.
 *
 * memtrace run --check --stack-depth N (N > 1): the return addresses above a report's site, which the agent
 * finds on the program's frame-pointer chain and sets around the report (its own thread's), printed one a line
 * under the report as ASan prints its frames: "    #0 stack_loop.c:9 (plain-c-O0+4661) in fill" (the line's
 * own site), then "    #1 stack_loop.c:14 (plain-c-O0+4711) in bad" and on; the same frames go into the JSON
 * record ("frames") and the SARIF result ("stacks").
 * The function's name is the executable's .symtab's when the agent read it (check_function_of, weak: the
 * compiled-in runtime has none; in a rewrite run it reads the .symtab itself, check_names.c, and finds the
 * frames by mc_frames_above); file:line the call-site table's, else the executable's
 * DWARF line table's that memtrace handed the agent (check_line_of, weak too: check_locals.c), for a return
 * address the line of the call (the byte before it; #0 too when the report's site is a wrapper's return
 * address, mc_frame0_return, rather than a faulting instruction).
 * A site in inlined code (gcc -O2) is followed by its frames, one per inlined function, innermost first, each
 * "(inlined)", then the function the code lies in (docs/check.md, "Inlined frames"):
 *       #0 x.c:14 (main+405) in set (inlined)
 *       #1 x.c:34 (main+405) in main
 * and the block's allocating and freeing calls likewise, under "  allocated at:" and "  freed at:". A block the
 * C++ library allocated or freed for the program is said by the program's call (check_callers.c found it, or its
 * inlined frames give it) and the library function it went through (docs/check.md, "Sites in the user's code"):
 *   (a block of 64 bytes, allocated at cases.cc:50, through std::vector<int, std::allocator<int> >::vector(...))
 *
 * What it gets wrong: the compiled-in runtime, outside a rewrite run, has one frame of stack per site (the
 * calling one, and the calls inlined there); a frame-pointer chain ends at the first function without one.
 */
#include <stdint.h>

#include "check.h"
#include "check_inline.h"
#include "check_report.h"

/* initial-exec, as every thread variable here: a fault can come in a new thread before its TLS is set up */
__thread const uint64_t *mc_frames __attribute__((tls_model("initial-exec")));
__thread int mc_nframes __attribute__((tls_model("initial-exec")));
__thread int mc_frame0_return __attribute__((tls_model("initial-exec")));
__attribute__((weak)) const char *check_function_of(uintptr_t pc);
/* Inlined frames (docs/check.md, "Inlined frames"): the table of the module that holds pc (built by memtrace
 * from its DWARF: check_inline.h) and the module's load bias, or NULL; the agent's (check_inlines.c: the
 * executable's, handed over behind MEMTRACE_CHECK_FRAMES) or the runtime's (check_inline.c: the section
 * .memtrace_inlines memtrace cc --check put in each linked module). A frame whose address lies in inlined code
 * becomes one frame per inlined function, innermost first, each marked "(inlined)", then the function the
 * code lies in: addr2line -i's chain. mc_stack_depth 1 (--stack-depth 1, MEMTRACE_STACK_DEPTH=1): no frames. */
__attribute__((weak)) const struct mc_inlines *mc_inline_table(uintptr_t pc, uintptr_t *bias);
int mc_stack_depth = 12;   /* MEMTRACE_STACK_DEPTH (check_outcome.c), --stack-depth (check_stackvars.c) */
#define MC_MAX_FRAMES 64
/* the frames of the report being made: named once for the line, the JSON and SARIF (under mc_report_lock); the
 * access's, and those of the allocating and freeing calls when inlined code made them */
struct frames {
    int n;
    char code[MC_MAX_FRAMES][512], line[MC_MAX_FRAMES][512], fn[MC_MAX_FRAMES][512];
    int inlined[MC_MAX_FRAMES];
    struct mc_site_ref ref[MC_MAX_FRAMES];
};
static struct frames fr, fr_alloc, fr_free;

static void add_frame(struct frames *f, const char *code, const char *line, const char *fn, int inlined)
{
    if (f->n >= MC_MAX_FRAMES) return;
    int k = f->n++;
    snprintf(f->code[k], sizeof f->code[k], "%s", code);
    snprintf(f->line[k], sizeof f->line[k], "%s", line ? line : "");
    snprintf(f->fn[k], sizeof f->fn[k], "%s", fn ? mc_spell_function(fn) : "");
    f->inlined[k] = inlined;
    f->ref[k] = (struct mc_site_ref){f->code[k], line ? f->line[k] : NULL, f->fn[k][0] ? f->fn[k] : NULL, inlined};
}

/* One code address's frames into f: at (a return address when ret, else an instruction) named as the report
 * names code, with its line and function, expanded into its inlined calls when it lies in inlined code.
 * Returns how many calls were inlined there (0: the one frame, added only when always). */
static int add_frames(struct frames *f, uintptr_t at, int ret, int always)
{
    uintptr_t call = ret ? at - 1 : at, bias = 0;
    const char *line, *fn = check_function_of ? check_function_of(call) : mc_site_function((const void *)call);
    char code[512];
    mc_name_code((const void *)at, ret, code, sizeof code, &line, NULL);
    if (!line && check_line_of) line = check_line_of(call);
    const struct mc_inl_call *chain[MC_MAX_FRAMES];
    const struct mc_inlines *t = mc_stack_depth > 1 && mc_inline_table ? mc_inline_table(call, &bias) : NULL;
    int k = t && call >= bias ? mc_inlines_chain(t, call - bias, chain, MC_MAX_FRAMES) : 0;
    if (!k) {
        if (always) add_frame(f, code, line, fn, 0);
        return 0;
    }
    /* the innermost call's line is the line table's; each outer one's is where its inner call was made */
    add_frame(f, code, line, mc_inlines_str(t, chain[0]->name), 1);
    for (int i = 1; i <= k; i++) {
        char where[512];
        const char *file = chain[i - 1]->file != 0xffffffffu ? mc_inlines_str(t, chain[i - 1]->file) : NULL;
        if (file && chain[i - 1]->line) snprintf(where, sizeof where, "%s:%u", file, chain[i - 1]->line);
        add_frame(f, code, file && chain[i - 1]->line ? where : NULL, i < k ? mc_inlines_str(t, chain[i]->name) : fn, i < k);
    }
    return k;
}

/* A block's allocating or freeing call (return address pc) lies in calls of the C++ library's plumbing that
 * gcc inlined into the program's function (std::vector's constructor at -O2): the line of the program's own
 * call into them into lbuf (MC_LINE_MAX bytes), the outermost plumbing function into via; 0 otherwise. */
static int inlined_user_line(const void *pc, char *lbuf, char *via, size_t nvia)
{
    uintptr_t call = (uintptr_t)pc - 1, bias = 0;
    const struct mc_inl_call *chain[MC_MAX_FRAMES];
    const struct mc_inlines *t = pc && mc_stack_depth > 1 && mc_inline_table ? mc_inline_table(call, &bias) : NULL;
    int k = t && call >= bias ? mc_inlines_chain(t, call - bias, chain, MC_MAX_FRAMES) : 0;
    if (!k || !mc_plumbing_name(mc_inlines_str(t, chain[0]->name))) return 0;
    for (int i = 1; i <= k; i++) {
        const char *fn = i < k ? mc_inlines_str(t, chain[i]->name)
                               : check_function_of ? check_function_of(call) : mc_site_function((const void *)call);
        if (fn && mc_plumbing_name(fn)) continue;
        const char *file = chain[i - 1]->file != 0xffffffffu ? mc_inlines_str(t, chain[i - 1]->file) : NULL;
        if (!file || !chain[i - 1]->line) return 0;
        snprintf(lbuf, MC_LINE_MAX, "%s:%u", file, chain[i - 1]->line);
        snprintf(via, nvia, "%s", mc_spell_function(mc_inlines_str(t, chain[i - 1]->name)));
        return 1;
    }
    return 0;
}

/* A block's site for its description: "cases.cc:49, through std::vector<int>::vector(...)" when the program's
 * call went through the C++ library's plumbing (inlined there, or called: the call before the return address
 * check_callers.c kept), else mc_where(pc). */
void mc_block_where(const void *pc, char *out, size_t n)
{
    char at[MC_LINE_MAX], via[1024];
    if (!inlined_user_line(pc, at, via, sizeof via)) {
        mc_where(pc, at, sizeof at);
        if (!mc_through(pc, via, sizeof via)) via[0] = 0;
    }
    if (via[0]) snprintf(out, n, "%s, through %s", at, via);
    else snprintf(out, n, "%s", at);
}

/* A block's allocating or freeing call (return address pc) for JSON and SARIF: its code into code, its line
 * into *line (lbuf MC_LINE_MAX bytes): the program's line when the call lies in inlined plumbing. */
void mc_block_site(const void *pc, char *code, size_t n, const char **line, char *lbuf)
{
    char via[1024];
    mc_name_code(pc, 1, code, n, line, lbuf);
    if (inlined_user_line(pc, lbuf, via, sizeof via)) *line = lbuf;
}

/* A rewrite run's check runtime (check_stackvars.c): the program's return addresses above a site, by the
 * frame-pointer chain from rbp (0: found from a wrapper's return address); weak, as only that runtime has it. */
__attribute__((weak)) int mc_frames_above(uintptr_t at, int ret, uintptr_t rbp, uint64_t *out, int max);
/* set by check_rwprobe.c around an access's report: its site is the instruction, the program's %rbp this */
__thread int mc_site_insn __attribute__((tls_model("initial-exec")));
__thread uintptr_t mc_site_rbp __attribute__((tls_model("initial-exec")));

/* whether the report's site is a return address: a fault's pc is the instruction, as a rewrite run's
 * trampoline's; a wrapper's site, and every site of the runtime's (a check call's), a return address */
int mc_site_ret(void) { return check_function_of ? mc_frame0_return : !mc_site_insn; }

/* The access's frames: its site, then the return addresses run --check found above it (mc_frames: the agent's,
 * or in a rewrite run the runtime's own, mc_frames_above); none when there are no return addresses and the
 * site is in no inlined code (the report's line says it all). */
void mc_name_frames(const void *pc)
{
    fr.n = 0;
    int ret0 = mc_site_ret();
    uint64_t own[MC_MAX_FRAMES];
    int mine = 0;
    if (!mc_nframes && mc_frames_above && mc_stack_depth > 1) {
        int max = mc_stack_depth - 1 < MC_MAX_FRAMES - 1 ? mc_stack_depth - 1 : MC_MAX_FRAMES - 1;
        mine = mc_frames_above((uintptr_t)pc, ret0, mc_site_insn ? mc_site_rbp : 0, own, max);
        if (mine > 0) { mc_frames = own; mc_nframes = mine; }
    }
    add_frames(&fr, (uintptr_t)pc, ret0, mc_nframes > 0);
    for (int i = 0; i < mc_nframes; i++) add_frames(&fr, (uintptr_t)mc_frames[i], 1, 1);
    if (mine > 0) { mc_frames = NULL; mc_nframes = 0; }
    mc_sarif_stack(fr.ref, fr.n);
}

/* The allocating and freeing calls' frames, when they lie in inlined code (NULL pc: none). */
static void name_block_frames(const void *alloc_pc, const void *free_pc)
{
    fr_alloc.n = fr_free.n = 0;
    if (alloc_pc) add_frames(&fr_alloc, (uintptr_t)alloc_pc, 1, 0);
    if (free_pc) add_frames(&fr_free, (uintptr_t)free_pc, 1, 0);
    mc_sarif_block_stacks(fr_alloc.ref, fr_alloc.n, fr_free.ref, fr_free.n);
}

/* A block's allocating call and, when it was freed, its freeing call named for JSON and SARIF into s (code,
 * and the line of the program's own call when it went through inlined plumbing), and their frames. */
void mc_name_block_sites(const struct mc_block *b, struct mc_block_sites *s)
{
    int was_freed = b->magic == MC_QUARANTINED;
    name_block_frames(b->alloc_pc, was_freed ? b->free_pc : NULL);
    mc_block_site(b->alloc_pc, s->a, sizeof s->a, &s->allocated.line, s->aline);
    s->allocated.code = s->a;
    if (was_freed) {
        mc_block_site(b->free_pc, s->f, sizeof s->f, &s->freed.line, s->fline);
        s->freed.code = s->f;
    }
}

static void put_frame_lines(struct mc_out *l, const struct frames *f)
{
    for (int k = 0; k < f->n; k++) {
        mc_put(l, "\n    #%d %s", k, f->line[k][0] ? f->line[k] : f->code[k]);
        if (f->line[k][0]) mc_put(l, " (%s)", f->code[k]);
        if (f->fn[k][0]) mc_put(l, " in %s", f->fn[k]);
        if (f->inlined[k]) mc_put(l, " (inlined)");
    }
}
void mc_put_frames(struct mc_out *l)
{
    put_frame_lines(l, &fr);
    if (fr_alloc.n) { mc_put(l, "\n  allocated at:"); put_frame_lines(l, &fr_alloc); }
    if (fr_free.n) { mc_put(l, "\n  freed at:"); put_frame_lines(l, &fr_free); }
    fr_alloc.n = fr_free.n = 0;
}
/* "frames": [{"code", "line", "function"[, "inlined": true]}], innermost first */
static void put_json_frame_list(struct mc_out *j, const struct frames *f)
{
    mc_put(j, ",\"frames\":[");
    for (int k = 0; k < f->n; k++) {
        mc_put(j, "%s{\"code\":", k ? "," : "");
        mc_put_json(j, f->code[k]);
        mc_put(j, ",\"line\":");
        mc_put_json(j, f->line[k][0] ? f->line[k] : NULL);
        mc_put(j, ",\"function\":");
        mc_put_json(j, f->fn[k][0] ? f->fn[k] : NULL);
        if (f->inlined[k]) mc_put(j, ",\"inlined\":true");
        mc_put(j, "}");
    }
    mc_put(j, "]");
}
/* the JSON record's "frames", when there are frames */
void mc_put_json_frames(struct mc_out *j)
{
    if (fr.n) put_json_frame_list(j, &fr);
}
/* a site: ,"key":{"code", "line"[, "frames"]}, the frames those of the block's allocating (MC_ALLOC_FRAMES) or
 * freeing (MC_FREE_FRAMES) call, or none */
void mc_put_json_site(struct mc_out *j, const char *key, const char *code, const char *line, int frames)
{
    const struct frames *f = frames == MC_ALLOC_FRAMES ? &fr_alloc : frames == MC_FREE_FRAMES ? &fr_free : NULL;
    mc_put(j, ",\"%s\":{\"code\":", key);
    mc_put_json(j, code);
    mc_put(j, ",\"line\":");
    mc_put_json(j, line);
    if (f && f->n) put_json_frame_list(j, f);
    mc_put(j, "}");
}
