/*
 * mt_unwind.c (shared by the agent and the runtime): the allocation stacks of code built without frame
 * pointers (docs/stacks.md, "How the frames are found"). Each loaded object's call frame information
 * (.eh_frame, found through .eh_frame_hdr's table of FDEs) is read once, the first time a stack passes
 * through the object, and compiled into a sorted table of rows: from this code address on, the canonical
 * frame address (CFA) is rsp + n, rbp + n or *(rbp + n), the return address is at CFA - 8, and rbp is
 * kept, saved at CFA + m or saved at *(rbp + m). A frame then costs a binary search and two or three loads
 * from the stack: no lock, no allocation, no system call (async-signal-safe: a thread that finds the table
 * being built by another, or interrupted itself while building it, walks that object by frame pointers).
 *
 * The section bytes are read through /proc/self/mem, not in place: fault mode traces the modules'
 * read-only data, where .eh_frame lies, so reading it in place would fault on traced pages; the kernel's
 * read opens nothing and sees the bytes the loader mapped (the executable, a deleted file, the vDSO alike).
 * The table lives in private pages of the library's own (mmap), never in the traced heap.
 *
 * How its output reads: mt_unwind's frames are return addresses, innermost first; a frame found through
 * an FDE carries MT_FRAME_CFI (bit 63, never set in a user-space address); a frame found by following the
 * saved rbp where the code has no FDE (hand-written assembly, trampolines, JIT code) does not, and Java
 * keeps it only when the function it came from sets up rbp (heap.StackFrames).
 *
 * What it gets wrong: only what gcc and clang emit for x86-64 is understood (CFA from rsp or rbp, the
 * return address at CFA - 8, rbp saved at an offset, gcc's realigned `main`); a row with any other rule
 * (a signal frame's expressions, a CFA in another register) ends the stack there. Objects over 4 GiB of
 * code, or whose .eh_frame_hdr table is not gcc's/ld's (datarel sdata4) encoding, are walked by frame
 * pointers; so are objects registered once 1,024 are known. An object unloaded and another loaded at its
 * addresses is told apart only when the new one is reported (mt_modules_new).
 */
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>

#include "mt_common.h"

/* A row: from module address `pc` (relative to the load bias) up to the next row's, how to find the   */
/* caller's frame. */
enum { ROW_NOFDE = 0, ROW_RSP = 1, ROW_RBP = 2, ROW_DEREF = 3, ROW_STOP = 4 };
enum { RBP_SAME = 0, RBP_AT_CFA = 1, RBP_AT_RBP = 2, RBP_LOST = 3 };
struct row {
    uint32_t pc;
    int32_t cfa_off;
    int16_t rbp_off;
    uint8_t kind, rbp;
};

enum { MOD_NEW = 0, MOD_BUILDING = 1, MOD_READY = 2, MOD_FAILED = 3 };
struct module {
    uintptr_t lo, hi, bias, hdr, hdr_len; /* executable extent, load bias, .eh_frame_hdr in memory */
    const struct row *rows;
    uint32_t nrows;
    int state, live;
};
#define MODULES 1024
static struct module modules[MODULES];
static int nmodules;

/* ---- registration (mt_modules_new's walk) ------------------------------------------------------- */

void mt_unwind_add_module(const struct dl_phdr_info *info)
{
    uintptr_t lo = ~(uintptr_t)0, hi = 0, hdr = 0, hdr_len = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            uintptr_t s = info->dlpi_addr + ph->p_vaddr, e = s + ph->p_memsz;
            if (s < lo) lo = s;
            if (e > hi) hi = e;
        } else if (ph->p_type == PT_GNU_EH_FRAME) {
            hdr = info->dlpi_addr + ph->p_vaddr;
            hdr_len = ph->p_memsz;
        }
    }
    if (hi <= lo) return;
    int n = __atomic_load_n(&nmodules, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++) {
        struct module *m = &modules[i];
        if (!__atomic_load_n(&m->live, __ATOMIC_ACQUIRE) || m->hi <= lo || m->lo >= hi) continue;
        if (m->lo == lo && m->hi == hi && m->bias == info->dlpi_addr && m->hdr == hdr) return; /* known */
        __atomic_store_n(&m->live, 0, __ATOMIC_RELEASE); /* unloaded: another object holds its addresses */
    }
    int i = __atomic_fetch_add(&nmodules, 1, __ATOMIC_ACQ_REL);
    if (i >= MODULES) {
        __atomic_store_n(&nmodules, MODULES, __ATOMIC_RELEASE);
        return;
    }
    struct module *m = &modules[i];
    m->lo = lo;
    m->hi = hi;
    m->bias = info->dlpi_addr;
    m->hdr = hdr;
    m->hdr_len = hdr_len;
    m->state = hdr ? MOD_NEW : MOD_FAILED;
    __atomic_store_n(&m->live, 1, __ATOMIC_RELEASE);
}

/* ---- reading the bytes ---------------------------------------------------------------------------- */

/* n bytes at address `at` of this process into buf (the kernel's read: traced pages open nothing). */
static int read_mem(int fd, void *buf, uintptr_t at, size_t n)
{
    size_t done = 0;
    while (done < n) {
        long r = mt_sys4(SYS_pread64, fd, (char *)buf + done, (long)(n - done), (long)(at + done));
        if (r <= 0) return -1;
        done += (size_t)r;
    }
    return 0;
}

static size_t page_round(size_t n) { return (n + 4095) & ~(size_t)4095; }

/* ---- DWARF call frame information ----------------------------------------------------------------- */

/* A cursor over bytes that lie at run-time address `addr` + (p - base). */
struct cur {
    const uint8_t *p, *end, *base;
    uintptr_t addr;
    int bad;
};

static uint64_t u8(struct cur *c)
{
    if (c->p + 1 > c->end) { c->bad = 1; return 0; }
    return *c->p++;
}
static uint64_t fixed(struct cur *c, int n)
{
    if (c->p + n > c->end) { c->bad = 1; c->p = c->end; return 0; }
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v |= (uint64_t)c->p[i] << (8 * i);
    c->p += n;
    return v;
}
static uint64_t uleb(struct cur *c)
{
    uint64_t v = 0;
    for (int s = 0; s < 64; s += 7) {
        uint64_t b = u8(c);
        v |= (b & 0x7f) << s;
        if (!(b & 0x80)) return v;
    }
    c->bad = 1;
    return v;
}
static int64_t sleb(struct cur *c)
{
    int64_t v = 0;
    int s = 0;
    uint64_t b;
    do {
        b = u8(c);
        if (s < 64) v |= (int64_t)((b & 0x7f) << s);
        s += 7;
    } while ((b & 0x80) && !c->bad);
    if (s < 64 && (b & 0x40)) v |= -((int64_t)1 << s);
    return v;
}

/* A pointer in DW_EH_PE encoding `enc` (absolute, pc-relative or relative to `datarel`); 0 when unknown. */
static uint64_t pointer(struct cur *c, int enc, uintptr_t datarel)
{
    if (enc == 0xff) return 0; /* omitted */
    uintptr_t here = c->addr + (uintptr_t)(c->p - c->base);
    uint64_t v;
    switch (enc & 0x0f) {
    case 0x00: v = fixed(c, 8); break;
    case 0x01: v = uleb(c); break;
    case 0x02: v = fixed(c, 2); break;
    case 0x03: v = fixed(c, 4); break;
    case 0x04: v = fixed(c, 8); break;
    case 0x09: v = (uint64_t)sleb(c); break;
    case 0x0a: v = (uint64_t)(int64_t)(int16_t)fixed(c, 2); break;
    case 0x0b: v = (uint64_t)(int64_t)(int32_t)fixed(c, 4); break;
    case 0x0c: v = fixed(c, 8); break;
    default: c->bad = 1; return 0;
    }
    switch (enc & 0x70) {
    case 0x00: break;
    case 0x10: v += here; break;
    case 0x30: v += datarel; break;
    default: c->bad = 1; return 0;
    }
    if (enc & 0x80) c->bad = 1; /* indirect: never for the fields read here */
    return v;
}

/* The rule set at one code address: what a row records, plus what the CFA and rbp rules were read from. */
struct rules {
    int cfa_reg;      /* DWARF 7 rsp, 6 rbp; -1 any other (ends the stack) */
    int64_t cfa_off;
    int deref;        /* CFA = *(rbp + cfa_off) (gcc's realigned main) */
    int rbp;          /* RBP_* */
    int64_t rbp_off;
    int stop;         /* the return address is undefined (the outermost frame) or not at CFA - 8 */
};

struct cie {
    int64_t data_align;
    uint64_t code_align;
    int fde_enc, has_z, signal;
    const uint8_t *insns, *insns_end;
};

static int parse_cie(const uint8_t *buf, uintptr_t addr, size_t size, size_t at, struct cie *ci)
{
    struct cur c = {buf + at, buf + size, buf, addr, 0};
    uint64_t len = fixed(&c, 4);
    if (len == 0 || len == 0xffffffff || at + 4 + len > size) return -1;
    c.end = buf + at + 4 + len;
    if (fixed(&c, 4) != 0) return -1; /* not a CIE */
    int version = (int)u8(&c);
    if (version != 1 && version != 3) return -1;
    const char *aug = (const char *)c.p;
    while (c.p < c.end && *c.p) c.p++;
    c.p++;
    if (aug[0] == 'e' && aug[1] == 'h') fixed(&c, 8);
    ci->code_align = uleb(&c);
    ci->data_align = sleb(&c);
    uint64_t ra = version == 1 ? u8(&c) : uleb(&c);
    if (ra != 16) return -1;
    ci->fde_enc = 0;
    ci->has_z = 0;
    ci->signal = 0;
    const uint8_t *aug_end = NULL;
    for (const char *a = aug; *a && !c.bad && !(aug_end && c.p > aug_end); a++) {
        if (*a != 'z' && *a != 'R' && *a != 'P' && *a != 'L' && *a != 'S' && *a != 'e' && *a != 'h') {
            if (!aug_end) return -1;
            break; /* unknown: its data is skipped with the rest of the augmentation */
        }
        switch (*a) {
        case 'z': ci->has_z = 1; { uint64_t n = uleb(&c); aug_end = c.p + n; } break;
        case 'R': ci->fde_enc = (int)u8(&c); break;
        case 'P': { int enc = (int)u8(&c); pointer(&c, enc & 0x7f, 0); } break;
        case 'L': u8(&c); break;
        case 'S': ci->signal = 1; break;
        default: break;
        }
    }
    if (aug_end) c.p = aug_end;
    if (c.bad || c.p > c.end) return -1;
    ci->insns = c.p;
    ci->insns_end = c.end;
    return 0;
}

static struct row row_of(const struct rules *r, uint32_t pc)
{
    struct row w = {pc, 0, 0, ROW_STOP, RBP_LOST};
    if (r->stop || r->cfa_off != (int32_t)r->cfa_off) return w;
    if (r->deref && r->cfa_reg == 6) w.kind = ROW_DEREF;
    else if (!r->deref && r->cfa_reg == 7) w.kind = ROW_RSP;
    else if (!r->deref && r->cfa_reg == 6) w.kind = ROW_RBP;
    else return w;
    w.cfa_off = (int32_t)r->cfa_off;
    w.rbp = (uint8_t)r->rbp;
    if (r->rbp_off != (int16_t)r->rbp_off) w.rbp = RBP_LOST;
    else w.rbp_off = (int16_t)r->rbp_off;
    return w;
}

static int same_rule(const struct row *a, const struct row *b)
{
    return a->kind == b->kind && a->cfa_off == b->cfa_off && a->rbp == b->rbp && a->rbp_off == b->rbp_off;
}

/* Appends a row (out NULL: counts it), unless it says what the last one did. */
static void put(struct row *out, uint32_t *n, struct row *last, int *have, struct row w)
{
    if (*have && same_rule(last, &w)) return;
    if (*have && last->pc == w.pc) { /* the last row's range is empty: this one replaces it */
        if (out) out[*n - 1] = w;
        *last = w;
        return;
    }
    if (out) out[*n] = w;
    (*n)++;
    *last = w;
    *have = 1;
}

#define STATES 8
/* Runs CFA instructions [p, end) from location `loc`, up to `limit`; the CIE's own when fde is 0. */
static int run_insns(const struct cie *ci, struct cur *c, struct rules *r, const struct rules *initial,
                     uintptr_t *loc, uintptr_t limit, uintptr_t bias, struct row *out, uint32_t *n,
                     struct row *last, int *have)
{
    struct rules saved[STATES];
    int nsaved = 0;
    while (c->p < c->end && !c->bad) {
        uint8_t op = (uint8_t)u8(c);
        uint64_t reg, adv = 0;
        int64_t off;
        switch (op >> 6) {
        case 1: adv = op & 0x3f; goto advance;
        case 2:
            reg = op & 0x3f;
            off = (int64_t)uleb(c) * ci->data_align;
            goto offset;
        case 3:
            reg = op & 0x3f;
            goto restore;
        }
        switch (op) {
        case 0x00: break;                                      /* nop */
        case 0x01: c->bad = 1; break;                          /* set_loc: never from gcc */
        case 0x02: adv = fixed(c, 1); goto advance;
        case 0x03: adv = fixed(c, 2); goto advance;
        case 0x04: adv = fixed(c, 4); goto advance;
        case 0x05: reg = uleb(c); off = (int64_t)uleb(c) * ci->data_align; goto offset;
        case 0x06: reg = uleb(c); goto restore;
        case 0x07:                                             /* undefined */
            reg = uleb(c);
            if (reg == 16) r->stop = 1;
            else if (reg == 6) r->rbp = RBP_LOST;
            break;
        case 0x08:                                             /* same_value */
            reg = uleb(c);
            if (reg == 6) r->rbp = RBP_SAME;
            break;
        case 0x09:                                             /* register */
            reg = uleb(c);
            uleb(c);
            if (reg == 16) r->stop = 1;
            else if (reg == 6) r->rbp = RBP_LOST;
            break;
        case 0x0a:
            if (nsaved < STATES) saved[nsaved++] = *r;
            else c->bad = 1;
            break;
        case 0x0b:
            if (nsaved > 0) {
                /* the CFA rule is not part of the saved state in DWARF 5, but gcc relies on it being restored */
                *r = saved[--nsaved];
            } else c->bad = 1;
            break;
        case 0x0c: r->cfa_reg = (int)uleb(c); r->cfa_off = (int64_t)uleb(c); r->deref = 0; break;
        case 0x0d: r->cfa_reg = (int)uleb(c); r->deref = 0; break;
        case 0x0e: r->cfa_off = (int64_t)uleb(c); break;
        case 0x0f: {                                           /* def_cfa_expression */
            uint64_t len = uleb(c);
            const uint8_t *e = c->p;
            struct cur x = {e, e + len, c->base, c->addr, 0};
            r->cfa_reg = -1;
            if (len >= 3 && x.p < x.end && *x.p == 0x76) {     /* DW_OP_breg6 off; DW_OP_deref */
                x.p++;
                int64_t o = sleb(&x);
                if (!x.bad && x.p + 1 == x.end && *x.p == 0x06) { r->cfa_reg = 6; r->cfa_off = o; r->deref = 1; }
            }
            c->p = e + len;
            if (c->p > c->end) c->bad = 1;
            break;
        }
        case 0x10: {                                           /* expression */
            reg = uleb(c);
            uint64_t len = uleb(c);
            const uint8_t *e = c->p;
            struct cur x = {e, e + len, c->base, c->addr, 0};
            if (reg == 16) r->stop = 1;
            else if (reg == 6) {
                r->rbp = RBP_LOST;
                if (len >= 2 && *x.p == 0x76) {                /* DW_OP_breg6 off: saved at rbp + off */
                    x.p++;
                    int64_t o = sleb(&x);
                    if (!x.bad && x.p == x.end) { r->rbp = RBP_AT_RBP; r->rbp_off = o; }
                }
            }
            c->p = e + len;
            if (c->p > c->end) c->bad = 1;
            break;
        }
        case 0x11: reg = uleb(c); off = sleb(c) * ci->data_align; goto offset;
        case 0x12: r->cfa_reg = (int)uleb(c); r->cfa_off = sleb(c) * ci->data_align; r->deref = 0; break;
        case 0x13: r->cfa_off = sleb(c) * ci->data_align; break;
        case 0x14: case 0x15:                                  /* val_offset: not a saved register */
            reg = uleb(c);
            if (op == 0x14) uleb(c); else sleb(c);
            if (reg == 16) r->stop = 1;
            else if (reg == 6) r->rbp = RBP_LOST;
            break;
        case 0x16: {                                           /* val_expression */
            reg = uleb(c);
            uint64_t len = uleb(c);
            c->p += len;
            if (c->p > c->end) c->bad = 1;
            if (reg == 16) r->stop = 1;
            else if (reg == 6) r->rbp = RBP_LOST;
            break;
        }
        case 0x2e: uleb(c); break;                             /* GNU_args_size */
        case 0x2f: reg = uleb(c); off = -(int64_t)uleb(c) * ci->data_align; goto offset;
        default: c->bad = 1; break;
        }
        continue;
    advance:
        if (!out && !n) { c->bad = 1; break; } /* an advance in a CIE's instructions */
        {
            uintptr_t next = *loc + adv * ci->code_align;
            if (next > limit) next = limit;
            if (next > *loc) put(out, n, last, have, row_of(r, (uint32_t)(*loc - bias)));
            *loc = next;
        }
        continue;
    offset:
        if (reg == 16 && off != -8) r->stop = 1;
        else if (reg == 6) { r->rbp = RBP_AT_CFA; r->rbp_off = off; }
        continue;
    restore:
        if (reg == 6 && initial) { r->rbp = initial->rbp; r->rbp_off = initial->rbp_off; }
        else if (reg == 16 && initial) r->stop = initial->stop;
        continue;
    }
    return c->bad ? -1 : 0;
}

/* The rows of every FDE of the table, in its (address) order; out NULL counts them. -1 on a flaw. */
static long compile(const uint8_t *hdr, uintptr_t hdr_addr, size_t hdr_len, const uint8_t *eh, uintptr_t eh_addr,
                    size_t eh_size, uint64_t count, uintptr_t bias, struct row *out)
{
    uint32_t n = 0;
    uintptr_t prev_end = 0;
    struct row last = {0, 0, 0, 0, 0};
    int have = 0;
    struct cur t = {hdr + 12, hdr + hdr_len, hdr, hdr_addr, 0};
    /* the table starts after version, 3 encodings, eh_frame_ptr (sdata4) and fde_count (udata4): checked by build() */
    for (uint64_t k = 0; k < count; k++) {
        uintptr_t start = (uintptr_t)pointer(&t, 0x3b, hdr_addr), fde = (uintptr_t)pointer(&t, 0x3b, hdr_addr);
        if (t.bad || fde < eh_addr || fde - eh_addr + 8 > eh_size) return -1;
        size_t at = fde - eh_addr;
        struct cur c = {eh + at, eh + eh_size, eh, eh_addr, 0};
        uint64_t len = fixed(&c, 4);
        if (len == 0 || len == 0xffffffff || at + 4 + len > eh_size) return -1;
        c.end = eh + at + 4 + len;
        uint64_t cie_ptr = fixed(&c, 4);
        if (cie_ptr == 0 || cie_ptr > at + 4) return -1;
        struct cie ci;
        if (parse_cie(eh, eh_addr, eh_size, at + 4 - cie_ptr, &ci) < 0) return -1;
        uintptr_t begin = (uintptr_t)pointer(&c, ci.fde_enc, 0);
        uintptr_t range = (uintptr_t)pointer(&c, ci.fde_enc & 0x0f, 0);
        if (ci.has_z) { uint64_t a = uleb(&c); c.p += a; }
        if (c.bad || c.p > c.end) return -1;
        (void)start;
        if (!range || begin < prev_end) continue; /* empty, or overlapping the one before: the first one wins */
        if (begin < bias || begin + range - bias > 0xffffffffu) return -1;
        prev_end = begin + range;
        /* the CIE's initial instructions, then the FDE's from its first address */
        struct rules r = {7, 8, 0, RBP_SAME, 0, 0};
        struct cur ic = {ci.insns, ci.insns_end, eh, eh_addr, 0};
        uintptr_t loc = begin;
        if (run_insns(&ci, &ic, &r, NULL, &loc, begin + range, bias, NULL, NULL, NULL, NULL) < 0) return -1;
        if (ci.signal) r.stop = 1;
        struct rules initial = r;
        if (run_insns(&ci, &c, &r, &initial, &loc, begin + range, bias, out, &n, &last, &have) < 0) return -1;
        if (loc < begin + range) put(out, &n, &last, &have, row_of(&r, (uint32_t)(loc - bias)));
        struct row end = {(uint32_t)(begin + range - bias), 0, 0, ROW_NOFDE, RBP_SAME};
        put(out, &n, &last, &have, end);
    }
    return n;
}

void *(*mt_unwind_pages)(size_t n);

/* Reads the module's .eh_frame_hdr and .eh_frame and compiles its rows; 0, or -1 (walked by frame pointers). */
static int build(struct module *m)
{
    int fd = (int)mt_sys4(SYS_openat, AT_FDCWD, "/proc/self/mem", O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) return -1;
    int ok = -1;
    size_t hdr_map = page_round(m->hdr_len), eh_map = 0, rows_map = 0;
    uint8_t *hdr = m->hdr_len >= 12 && m->hdr_len < (64u << 20) ? mt_map_pages(hdr_map) : NULL, *eh = NULL;
    struct row *rows = NULL;
    if (!hdr || read_mem(fd, hdr, m->hdr, m->hdr_len) < 0) goto out;
    /* version 1; eh_frame_ptr pc-relative sdata4, fde_count udata4, the table datarel sdata4: what ld writes */
    if (hdr[0] != 1 || hdr[1] != 0x1b || hdr[2] != 0x03 || hdr[3] != 0x3b) goto out;
    struct cur h = {hdr + 4, hdr + m->hdr_len, hdr, m->hdr, 0};
    uintptr_t eh_addr = (uintptr_t)pointer(&h, 0x1b, 0);
    uint64_t count = fixed(&h, 4);
    if (h.bad || count == 0 || 12 + count * 8 > m->hdr_len) goto out;
    /* .eh_frame ends after the FDE with the highest address (CIEs come before their FDEs) */
    uintptr_t last = eh_addr;
    for (uint64_t k = 0; k < count; k++) {
        pointer(&h, 0x3b, m->hdr);
        uintptr_t f = (uintptr_t)pointer(&h, 0x3b, m->hdr);
        if (f > last) last = f;
    }
    uint32_t last_len;
    if (h.bad || last < eh_addr || read_mem(fd, &last_len, last, 4) < 0 || last_len == 0xffffffff) goto out;
    size_t eh_size = last - eh_addr + 4 + last_len;
    if (eh_size > (256u << 20)) goto out;
    eh_map = page_round(eh_size);
    eh = mt_map_pages(eh_map);
    if (!eh || read_mem(fd, eh, eh_addr, eh_size) < 0) goto out;
    long n = compile(hdr, m->hdr, m->hdr_len, eh, eh_addr, eh_size, count, m->bias, NULL);
    if (n <= 0) goto out;
    rows_map = page_round((size_t)n * sizeof *rows);
    rows = mt_unwind_pages ? mt_unwind_pages(rows_map) : mt_map_pages(rows_map);
    if (!rows || compile(hdr, m->hdr, m->hdr_len, eh, eh_addr, eh_size, count, m->bias, rows) != n) goto out;
    mt_sys6(SYS_mprotect, (long)rows, (long)rows_map, PROT_READ, 0, 0, 0);
    m->rows = rows;
    m->nrows = (uint32_t)n;
    rows = NULL;
    ok = 0;
out:
    if (hdr) mt_unmap_pages(hdr, hdr_map);
    if (eh) mt_unmap_pages(eh, eh_map);
    /* pages from mt_unwind_pages stay listed as their owner's: kept (a compile that disagrees with its count, never seen) */
    if (rows && !mt_unwind_pages) mt_unmap_pages(rows, rows_map);
    mt_sys1(SYS_close, fd);
    return ok;
}

/* ---- the walk ------------------------------------------------------------------------------------ */

/* The row for code address pc of a module with rows; NULL where it has none (walked by frame pointers). */
static const struct row *lookup(uintptr_t pc)
{
    int n = __atomic_load_n(&nmodules, __ATOMIC_ACQUIRE);
    if (n > MODULES) n = MODULES;
    for (int i = 0; i < n; i++) {
        struct module *m = &modules[i];
        if (pc < m->lo || pc >= m->hi || !__atomic_load_n(&m->live, __ATOMIC_ACQUIRE)) continue;
        int s = __atomic_load_n(&m->state, __ATOMIC_ACQUIRE);
        if (s == MOD_NEW) {
            int expect = MOD_NEW;
            if (!__atomic_compare_exchange_n(&m->state, &expect, MOD_BUILDING, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
                return NULL;
            s = build(m) == 0 ? MOD_READY : MOD_FAILED;
            __atomic_store_n(&m->state, s, __ATOMIC_RELEASE);
        }
        if (s != MOD_READY) return NULL;
        uintptr_t rel = pc - m->bias;
        if (rel > 0xffffffffu) return NULL;
        const struct row *r = m->rows;
        uint32_t lo = 0, hi = m->nrows; /* the last row at or before rel */
        while (lo < hi) {
            uint32_t mid = (lo + hi) / 2;
            if (r[mid].pc <= rel) lo = mid + 1;
            else hi = mid;
        }
        return lo ? &r[lo - 1] : NULL;
    }
    return NULL;
}

/* A word of the stack between lo and hi (8 bytes inside, aligned); 0 when outside. */
static int stack_word(uintptr_t at, uintptr_t lo, uintptr_t hi, uintptr_t *v)
{
    if (at < lo || at > hi - 8 || (at & 7)) return 0;
    *v = *(const uintptr_t *)at;
    return 1;
}

int mt_unwind(uintptr_t pc, uintptr_t rsp, uintptr_t rbp, uintptr_t lo, uintptr_t hi, uint64_t *out, int max)
{
    int n = 0, rbp_known = 1;
    while (n < max) {
        const struct row *r = lookup(pc - 1);
        uintptr_t cfa, ret, tag = MT_FRAME_CFI;
        if (!r || r->kind == ROW_NOFDE) {
            /* no FDE: the saved rbp chain, which Java trusts only if the function set rbp up */
            if (!rbp_known || rbp < rsp || rbp - rsp > (1UL << 20)) break;
            cfa = rbp + 16;
            tag = 0;
            if (!stack_word(rbp, lo, hi, &rbp)) break;
        } else if (r->kind == ROW_RSP) {
            cfa = rsp + (intptr_t)r->cfa_off;
        } else if (r->kind == ROW_RBP || r->kind == ROW_DEREF) {
            if (!rbp_known) break;
            cfa = rbp + (intptr_t)r->cfa_off;
            if (r->kind == ROW_DEREF && !stack_word(cfa, lo, hi, &cfa)) break;
        } else break;
        /* the caller's frame lies above the callee's, inside the stack, never a frame of over 1 MiB */
        if (cfa <= rsp || cfa - rsp > (1UL << 20) || !stack_word(cfa - 8, lo, hi, &ret) || ret < 4096) break;
        if (tag && r->rbp == RBP_AT_CFA) rbp_known = stack_word(cfa + r->rbp_off, lo, hi, &rbp);
        else if (tag && r->rbp == RBP_AT_RBP) rbp_known = rbp_known && stack_word(rbp + r->rbp_off, lo, hi, &rbp);
        else if (tag && r->rbp == RBP_LOST) rbp_known = 0;
        out[n++] = ret | tag;
        rsp = cfa;
        pc = ret;
    }
    return n;
}
