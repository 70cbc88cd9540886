/*
 * rt_probe.c: the runtime reads probes from their code bytes (docs/compiled-in.md, "The probe", "Full
 * buffer", "Signal handlers"). No table is consulted: the rewriter emits a handful of fixed instruction
 * forms, and the bytes at an interrupted pc say where in a probe the thread stopped.
 *
 * rt_probe_store answers "is pc a probe's first store, `mov A,d(C)`?" (with the cursor load before it, or
 * in a loop that keeps its cursor in a register the site's `lea` and store after it; the decoder is
 * mt_probe.h's, which the rewriter tests' stub runtime shares): the full-buffer fault and a thread's first
 * probe stop there. rt_probe_window answers "did a probe stop between its first
 * store and the move of its cursor?", and if so rewinds it. A probe's first store writes the highest slot
 * of its group, and everything it does from there up to the cursor's move (`lea 16n(C),C`, then in a group
 * probe the store of C to the cursor in memory) is stores at or above the cursor, `lea`s into its address
 * register A, the GOT form's `mov 16(%rsp),%rax` reload (or an unsaved probe's reload of the cursor's offset
 * into A) and the advance of C: registers the probe owns and
 * memory beyond the cursor, nothing the program sees. So the probe can run again from its first store,
 * once A holds again what that store wrote (the address word, read back from the slot) and C is the
 * cursor: a signal handler's records then go first and the probe writes its slots after them, as if the
 * signal had come before the probe. (A probe whose first store is still ahead has its cursor register
 * named all the same: a loop's in a thread without a buffer yet holds 0, as the cursor does.) The first
 * store is found from its site: the slot's site word (in memory once stored, else in A or in the `lea`
 * still to come) is the label `.Lmt_s<sn>` in front of the group's last address `lea`, a few bytes before
 * the store, and the store is the one followed by `lea` of that label and the store of the site word.
 *
 * What it gets wrong: the forms are recognized by their bytes, so program code that looks exactly like a
 * probe's tail and holds the thread's cursor in a register would be rewound (no compiler output does:
 * the cursor's value exists only in probes). A rewrite probe that saves no register (TrampolineWriter)
 * loads the cursor's offset into A again after its last store (`mov cursor_slot(%rip),A`) and commits
 * through it: one more write of A in the tail. A probe whose commit store `mov C,%fs:…` is the first
 * instruction of a page is not rewound when stopped there (the 4 or 7 bytes before it are not read across
 * a page boundary); its C, past the cursor, becomes the cursor (commit_at: the store at pc is to the
 * cursor's own address), and its records come before the handler's instead of after. Rewinding never
 * lets a probe finish when every instruction is interrupted (a SIGTRAP handler with the trap flag set),
 * as with Linux's restartable sequences.
 */
#include "mt_probe.h"
#include "rt.h"

#define RIP 16 /* a decoded base: %rip */

/* The signal context's index of x86 register number r (ModRM/REX numbering). */
static const int context_index[16] = {REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
                                      REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15};

/* The cursor's offset from the thread pointer: what an executable's probe reads as `%fs:disp32`. */
long rt_cursor_tpoff(void)
{
    char *tp;
    __asm__("mov %%fs:0, %0" : "=r"(tp));
    return (char *)&__memtrace_cursor - tp;
}

int rt_probe_store(const unsigned char *pc, long *disp, int *loop)
{
    return mt_probe_store(pc, disp, loop, rt_cursor_tpoff());
}

/* One instruction of the forms probes are made of: [%fs prefix] REX.W 89/8b/8d with a memory operand. */
struct insn {
    int len, fs, op, reg, base, index; /* base -1: none, RIP: %rip; index -1: none */
    long disp;
};

/* Decodes only as far as the bytes keep matching those forms, so a mismatch stops inside the real */
/* instruction (never reading past a mapping's end on an instruction that is not a probe's).       */
static int decode(const unsigned char *p, struct insn *i)
{
    int n = 0;
    i->fs = p[0] == 0x64;
    n += i->fs;
    int rex = p[n];
    if ((rex & 0xf8) != 0x48) return 0;
    int op = p[n + 1];
    if (op != 0x89 && op != 0x8b && op != 0x8d) return 0;
    int modrm = p[n + 2], mod = modrm >> 6, rm = modrm & 7;
    if (mod == 3) return 0;
    n += 3;
    i->op = op;
    i->reg = ((modrm >> 3) & 7) | (rex & 4) << 1;
    i->index = -1;
    int wide = mod == 2;
    if (rm == 4) {
        int sib = p[n++], index = ((sib >> 3) & 7) | (rex & 2) << 2, b = sib & 7;
        if (index != 4) i->index = index;
        i->base = b == 5 && mod == 0 ? -1 : b | (rex & 1) << 3;
        wide |= b == 5 && mod == 0;
    } else if (rm == 5 && mod == 0) {
        i->base = RIP;
        wide = 1;
    } else {
        i->base = rm | (rex & 1) << 3;
    }
    if (wide) {
        int32_t d;
        rt_memcpy(&d, p + n, 4);
        i->disp = d;
        n += 4;
    } else {
        i->disp = mod == 1 ? (signed char)p[n++] : 0;
    }
    i->len = n;
    return n;
}

/* `lea 16n(C),C` (1 <= n <= 8): the move of a group's cursor past its n slots. */
static int advance(const struct insn *i)
{
    return i->op == 0x8d && !i->fs && i->reg == i->base && i->index < 0 && mt_probe_greg(i->reg) >= 0 && i->disp >= 16
           && i->disp <= 128 && i->disp % 16 == 0;
}

/* The commit of a group probe: `mov C,%fs:(T)` (GOT form) or `mov C,%fs:disp32` at the cursor's offset. */
static int commit(const unsigned char *p, int c)
{
    struct insn i;
    if (!decode(p, &i) || !i.fs || i.op != 0x89 || i.reg != c || i.index >= 0) return 0;
    return i.base < 0 ? i.disp == rt_cursor_tpoff() : i.base != RIP && i.disp == 0;
}

/* The group's first store, from the label `.Lmt_s<sn>` in front of its last address `lea`: `mov A,d(C)`  */
/* followed by `lea label(%rip),A` and `mov A,d+8(C)`, a few bytes on. Sets *a to A.                       */
static const unsigned char *first_store(uint64_t label, int c, long d, int *a)
{
    const unsigned char *start = (const unsigned char *)label;
    for (const unsigned char *q = start; q < start + 64; q++) {
        struct insn s, l, t;
        if (!decode(q, &s) || s.fs || s.op != 0x89 || s.base != c || s.index >= 0 || s.disp != d) continue;
        const unsigned char *lq = q + s.len;
        if (!decode(lq, &l) || l.fs || l.op != 0x8d || l.base != RIP || l.reg != s.reg
            || (uint64_t)(uintptr_t)(lq + l.len) + (uint64_t)l.disp != label)
            continue;
        if (!decode(lq + l.len, &t) || t.fs || t.op != 0x89 || t.reg != s.reg || t.base != c || t.index >= 0 || t.disp != d + 8)
            continue;
        *a = s.reg;
        return q;
    }
    return 0;
}

/* Where the tail of a probe from pc to its cursor's move says the probe stands. */
struct tail {
    int c, n, a;              /* cursor register, slots, address register (-1: not seen) */
    int group;                /* a group probe (the cursor goes to memory), not a loop's */
    char *base;               /* C before the move: the group's first slot */
    uint32_t ahead;           /* bit 2j: slot j's address store still to run; bit 2j+1: its site store */
    uint32_t lea_ahead;       /* bit j: the `lea` of slot j's site still to run, its label in site[j] */
    uint64_t site[8];
};

/* pc at a group probe's commit, its `lea 16n(C),C` right before: every store has run. */
static int at_commit(const unsigned char *pc, const greg_t *gr, struct tail *t)
{
    struct insn i;
    if (((uintptr_t)pc & 4095) < 7 || !decode(pc, &i) || !i.fs || i.op != 0x89 || !commit(pc, i.reg)) return 0;
    for (int len = 4; len <= 7; len += 3) {
        struct insn l;
        if (decode(pc - len, &l) == len && advance(&l) && l.reg == i.reg) {
            t->c = i.reg;
            t->n = (int)(l.disp / 16);
            t->group = 1;
            t->base = (char *)gr[mt_probe_greg(i.reg)] - l.disp;
            return 1;
        }
    }
    return 0;
}

/* Walks the probe's tail from pc: address `lea`s, slot stores, site `lea`s, %rax reloads, up to the move. */
static int walk(const unsigned char *pc, const greg_t *gr, struct tail *t)
{
    const unsigned char *p = pc;
    int pending = 0; /* the last instruction was a site `lea`, its label in label */
    uint64_t label = 0;
    for (int k = 0; k < 64; k++) {
        struct insn i;
        if (!decode(p, &i) || i.fs) return 0;
        const unsigned char *next = p + i.len;
        if (i.op == 0x89) { /* mov A,d(C) */
            if (i.index >= 0 || i.base < 0 || i.base == RIP || mt_probe_greg(i.base) < 0 || i.disp < 0 || i.disp >= 128
                || i.disp % 8 || (t->a >= 0 && i.reg != t->a) || (t->c >= 0 && i.base != t->c))
                return 0;
            t->a = i.reg;
            t->c = i.base;
            int slot = (int)(i.disp / 16), word = (int)(i.disp / 8 % 2);
            t->ahead |= 1u << (2 * slot + word);
            if (word && pending) {
                t->site[slot] = label;
                t->lea_ahead |= 1u << slot;
            }
            pending = 0;
        } else if (i.op == 0x8b && i.base == RIP) { /* mov cursor_slot(%rip),A: an unsaved probe's offset for its commit */
            if (t->a >= 0 && i.reg != t->a) return 0;
            t->a = i.reg;
            pending = 0;
        } else if (i.op == 0x8b) { /* mov 16(%rsp),%rax: the GOT form's reload of the program's %rax */
            if (i.reg != 0 || i.base != 4 || i.index >= 0 || i.disp != 16 || t->a > 0) return 0;
            t->a = 0;
            pending = 0;
        } else if (i.base == RIP) { /* lea .Lmt_s<s>(%rip),A */
            if (t->a >= 0 && i.reg != t->a) return 0;
            t->a = i.reg;
            pending = 1;
            label = (uint64_t)(uintptr_t)next + (uint64_t)i.disp;
        } else {
            /* `lea 16n(C),C` moves the cursor, unless it is an address `lea` of the GOT form that reads  */
            /* %rax (A), which a store of A follows.                                                      */
            struct insn s;
            int address = t->a >= 0 ? i.reg == t->a
                                    : decode(next, &s) && !s.fs && s.op == 0x89 && s.reg == i.reg && s.base != i.reg;
            if (advance(&i) && !address && (t->c < 0 || t->c == i.reg)) {
                t->c = i.reg;
                t->n = (int)(i.disp / 16);
                t->group = commit(next, i.reg);
                t->base = (char *)gr[mt_probe_greg(i.reg)];
                return 1;
            }
            if (t->a >= 0 && i.reg != t->a) return 0;
            t->a = i.reg;
            pending = 0;
        }
        p = next;
    }
    return 0;
}

/* pc at a group probe's commit whose `lea` lies on the page before, not read (at_commit): its slots are */
/* written up to C, which becomes the cursor, so that a handler's records follow them (not rewound, but   */
/* each once and in order). The store is a commit, not a program's store to its own TLS: its address is  */
/* the cursor's (T, in the GOT form, holds the cursor's offset).                                          */
static int commit_at(const unsigned char *pc, const greg_t *gr)
{
    struct insn i;
    if (!decode(pc, &i) || !i.fs || i.op != 0x89 || !commit(pc, i.reg) || mt_probe_greg(i.reg) < 0) return -1;
    if (i.base >= 0 && gr[context_index[i.base]] != (greg_t)rt_cursor_tpoff()) return -1;
    char *v = (char *)gr[context_index[i.reg]];
    if (!rt_past_cursor(v) || (v - rt_self.buf->base) % 16) return -1;
    __memtrace_cursor = v;
    return mt_probe_greg(i.reg);
}

int rt_probe_window(greg_t *gr)
{
    const unsigned char *pc = (const unsigned char *)gr[REG_RIP];
    struct tail t;
    rt_memzero(&t, sizeof t);
    t.a = t.c = -1;
    if (!at_commit(pc, gr, &t) && !walk(pc, gr, &t)) return commit_at(pc, gr);
    int last = t.n - 1;
    char *cursor = __memtrace_cursor;
    /* C is the cursor: a group probe's, loaded from memory, or a loop's, which the caller made the cursor */
    /* (rt_adopt_loop_cursor) when pc lies in its loop. Else pc is in no probe (or in a loop not known).    */
    if (t.base != cursor) return -1;
    /* The first store is still to run: nothing to undo (C is 0 in a thread that has no buffer yet). */
    if (t.ahead & 1u << 2 * last) return mt_probe_greg(t.c);
    if (!rt_self.buf || !cursor || (t.base - rt_self.buf->base) % 16 || t.base + 16 * t.n > rt_self.buf->end) return -1;
    uint64_t *slot = (uint64_t *)(t.base + 16 * last);
    uint64_t label;
    if (t.lea_ahead & 1u << last) label = t.site[last];
    else if (t.ahead & 1u << (2 * last + 1)) label = (uint64_t)gr[context_index[t.a]];
    else label = slot[1];
    /* The label stands before the first store, which stands before pc. */
    if (label >= (uint64_t)(uintptr_t)pc || (uint64_t)(uintptr_t)pc - label > 512) return -1;
    int a;
    const unsigned char *first = first_store(label, t.c, 16L * last, &a);
    if (!first || first >= pc) return -1;
    __memtrace_cursor = t.base;
    gr[context_index[a]] = (greg_t)slot[0];
    gr[mt_probe_greg(t.c)] = (greg_t)t.base;
    gr[REG_RIP] = (greg_t)(uintptr_t)first;
    return mt_probe_greg(t.c);
}
