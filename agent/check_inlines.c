/*
 * check_inlines.c: `memtrace run --check`'s inlined frames (docs/check.md, "Inlined frames"): the executable's
 * table of inlined calls, which memtrace built from its DWARF (org.memtrace.symbols.DwarfInlines.encode) and
 * handed over behind the stack-variable table of MEMTRACE_CHECK_FRAMES (check_locals.c keeps the mapping),
 * parsed once (check/check_inline.h checks every count) and given to check_stacks.c for the frames it names.
 *
 * What it gets wrong: only the executable's inlined calls are known (libraries' frames show the function alone);
 * an address outside the executable that lands in its table's range after the bias is taken off is not one
 * (the table's last segment ends every inlined range, so addresses past it have none).
 */
#include "agent.h"
#include "check/check_inline.h"

const unsigned char *check_locals_inlines(size_t *n, uintptr_t *bias);

const struct mc_inlines *mc_inline_table(uintptr_t pc, uintptr_t *bias)
{
    static struct mc_inlines t;
    static uintptr_t b;
    static int state; /* 0 not read yet, 1 a table, -1 none (called under the report lock) */
    if (!state) {
        size_t n;
        const unsigned char *p = check_locals_inlines(&n, &b);
        state = p && mc_inlines_parse(p, n, &t) == 0 ? 1 : -1;
    }
    if (state < 0 || pc < b || g.stack_depth <= 1) return NULL; /* --stack-depth 1: the one line */
    *bias = b;
    return &t;
}
