/*
 * rt_ccarm.c: access stacks for programs built with `memtrace cc` (docs/stacks.md, "Access stacks"). Part of
 * libmemtrace-rt.so. A compiled-in probe stores slots and never compares, so, as in rewrite mode
 * (rewrite/rw_arm.c), the decision is per probe and taken by a trap: at start, when the program records
 * (MEMTRACE_OUT or a memtrace parent) at MEMTRACE_STACK_DEPTH above 1, every module loaded then whose file has
 * a site table (section `memtrace_sites`, docs/compiled-in.md) gets an int3 over the first byte of each
 * probe's first site label. That label is the first instruction every probe form runs that is the same in
 * all of them (GOT and executable group probes, saved registers or none, a loop's probes, a single
 * instruction's): `lea EA,reg` of the group's last site, before the cursor is loaded, so the MT_CONTEXT the
 * handler writes lands where the probe then stores. Each armed probe's form is read from its code up to its
 * first store (probe_form): a group probe loads the cursor after the label, so no register holds it at the
 * trap; a loop's probe (docs/compiled-in.md, "A loop's cursor") stores through its register C at once, and
 * the entry names C, which rw_arm.c writes the record at and moves past it; anything else is not armed. The
 * probe's own first instruction differs by form (`lea -128(%rsp),%rsp`, `-136`, `-144`, none at all) and is
 * not in the site table. Which label is a probe's first: the site labels and instructions sorted by address,
 * a label whose previous label has a site's instruction between them (a group's labels all lie in its probe,
 * before the group's first instruction). The table goes to rw_arm_add (word 0 of each stack: the group's
 * first instruction, the first site instruction after the label; unwound at the label, whose %rsp moves
 * the function's CFI describes), the int3s are written once the SIGTRAP handler is kept (rt_signal.c), and
 * rw_arm traps, unwinds, sends, emulates the lea and writes the byte back after RW_ARM_RUNS entries.
 *
 * The same reading of probe forms (probe_heads) tells a program's signal handler, or a fatal signal, which
 * register is the cursor inside a loop that keeps it in one (rt_loop_register, rt_buffer.c): the
 * executable's loops (the only module that has them) are read when a signal first needs them, each from
 * a loop probe to its exit store `mov C,%fs:tpoff` after the back edge and back to its entry load `mov
 * %fs:tpoff,C` before the loop's label; inside such a range C is the cursor, anywhere else no register is.
 *
 * How it reads: nothing on stderr; the stacks are MT_CONTEXT records, which Java joins to the records that
 * follow (analysis.Interpretation), as rewrite mode's.
 *
 * What it gets wrong: modules loaded by dlopen after start are not armed (their accesses have no callers);
 * skeleton sites (kinds 7-9) are not armed; a label that is not a REX.W lea (a build older than the site
 * table's forms) is left alone; the module's code pages written (one byte per probe) become the process's
 * own; the first RW_ARM_RUNS executions are counted while recording is stopped too (MEMTRACE_AUTOSTART=0); a
 * debugger that stops on SIGTRAP stops at each armed execution; a probe run with SIGTRAP blocked by a raw
 * system call kills the process (as rewrite mode's traps); objects past the 64th with a site table are not
 * armed. Loops past the executable's 8,192nd, a loop whose exit lies more than 64 KB after one of its
 * probes, and every loop when /proc/self/exe cannot be read, are not known: a handler there records at the
 * cursor in memory, over the loop's records since its entry (as a guess that found nothing did); the first
 * signal that lands in the executable's code pays for reading the site table (two sorts of its labels):
 * 28-66 ms of wall clock for sqlite3's 80,633 sites at load average 24, the next such signal 18-24 us.
 */
#include <link.h>
#include <sys/mman.h>

#include "mt_elf.h"
#include "mt_probe.h"
#include "rt.h"

#define SITE_ENTRY 24        /* docs/compiled-in.md, "The site table" */
#define MAX_MODULES 64       /* modules with a site table armed at start */
#define MAX_SEGMENTS 4       /* executable segments of one module */

struct armed_module {
    struct rw_arm_entry *e;  /* the probes' int3 places, sorted by at */
    uint32_t n;
    size_t bytes;            /* e's mapping */
    uint64_t seg_lo[MAX_SEGMENTS], seg_hi[MAX_SEGMENTS];
    int seg_prot[MAX_SEGMENTS], segs;
};

static struct armed_module armed[MAX_MODULES];
static int armed_count;

static size_t pages(size_t n) { return (n + (size_t)rt.page - 1) & ~((size_t)rt.page - 1); }

/* The module's site table at run time and its entry count, from its file's section headers; 0: none. */
static uint32_t site_table(const char *path, uint64_t bias, const unsigned char **table)
{
    struct mt_elf elf;
    if (mt_elf_read(path, MT_ELF_SECTIONS, &elf) != 0) return 0;
    uint32_t n = 0;
    for (unsigned i = 0; i < elf.nsh; i++) {
        const Elf64_Shdr *sh = &elf.sh[i];
        if (!(sh->sh_flags & SHF_ALLOC) || sh->sh_type != SHT_PROGBITS || rt_strncmp(mt_elf_section_name(&elf, i), "memtrace_sites", 15))
            continue;
        if (sh->sh_size % SITE_ENTRY || sh->sh_size / SITE_ENTRY > 0xffffffffu) break;
        *table = (const unsigned char *)(bias + sh->sh_addr);
        n = (uint32_t)(sh->sh_size / SITE_ENTRY);
        break;
    }
    mt_elf_free(&elf);
    return n;
}

static int in_code(const struct armed_module *m, uint64_t a)
{
    for (int s = 0; s < m->segs; s++)
        if (a >= m->seg_lo[s] && a < m->seg_hi[s]) return 1;
    return 0;
}

static int32_t field(const unsigned char *p)
{
    int32_t v;
    rt_memcpy(&v, p, 4);
    return v;
}

/* The length of a load a group probe makes between its first site label's lea and its first store, else */
/* 0: `mov %fs:disp32,C` or `mov %fs:(T),C` (the cursor), `mov %fs:0,C` (an %fs operand's thread pointer),  */
/* `mov x(%rip),T` (the cursor's GOT slot): REX.W 8b, with the %fs prefix or rip-relative.                  */
static int probe_load(const unsigned char *p)
{
    int fs = p[0] == 0x64;
    const unsigned char *q = p + fs;
    if ((q[0] & 0xf8) != 0x48 || q[1] != 0x8b || q[2] >> 6) return 0;
    int rm = q[2] & 7;
    if (fs && rm == 4) return q[3] == 0x25 ? 9 : 0;
    if (fs) return rm == 5 ? 0 : 4;
    return rm == 5 ? 7 : 0;
}

/* Which form the probe whose first site label is the lea at b (len bytes) has, from what runs up to its */
/* first store: a loop's (the store right after the label's lea, or after the lea that takes 152 off an   */
/* %rsp-based address) sets *cursor to its cursor register's context index and returns 1; a group's      */
/* (loads before the store: the cursor in no register at the label) returns 1, *cursor -1; anything else */
/* 0. The loop's register is the one the trap handler (rw_arm.c) puts the record at and moves.           */
static int probe_form(const unsigned char *b, int len, int *cursor)
{
    const unsigned char *p = b + len;
    int loaded = 0;
    for (int k = 0; k < 6; k++) {
        long disp;
        int loop, c = rt_probe_store(p, &disp, &loop);
        if (c >= 0 && (loop ? !loaded : loaded)) {
            *cursor = loop ? c : -1;
            return 1;
        }
        int n = probe_load(p);
        loaded |= n > 0;
        if (!n) n = rw_arm_lea(p, p[0]);
        if (!n) return 0;
        p += n;
    }
    return 0;
}

/* The probes of the site table t (n entries) whose labels and instructions lie in m's code: each probe's */
/* first site label (sorted by address), its group's first instruction and its form, as entries of label */
/* (at, insn, flags RW_ARM_LOOP with cursor for a loop's probe); insn is scratch of the same size. Returns */
/* how many. The one reading of probe forms: the arming below and the loops a signal handler may          */
/* interrupt (rt_loop_register) both take it.                                                              */
static uint32_t probe_heads(const struct armed_module *m, const unsigned char *t, uint32_t n,
                            struct rw_arm_entry *label, struct rw_arm_entry *insn)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        const unsigned char *s = t + (size_t)i * SITE_ENTRY;
        uint64_t l = (uint64_t)(uintptr_t)s + (uint64_t)(int64_t)field(s);
        uint64_t a = (uint64_t)(uintptr_t)s + 4 + (uint64_t)(int64_t)field(s + 4);
        if (!in_code(m, l) || !in_code(m, a)) continue;
        label[k].at = l;
        label[k].pad = s[8]; /* the site's kind, until the table is made */
        insn[k++].at = a;
    }
    rw_arm_sort(label, k);
    rw_arm_sort(insn, k);
    uint32_t heads = 0, j = 0;
    for (uint32_t i = 0; i < k; i++) {
        uint64_t l = label[i].at;
        int first = i == 0;
        if (!first) {
            while (j < k && insn[j].at <= label[i - 1].at) j++;
            first = j < k && insn[j].at < l;
        }
        if (!first) continue;
        while (j < k && insn[j].at <= l) j++;
        const unsigned char *b = (const unsigned char *)(uintptr_t)l;
        /* the group's first instruction, a load/store/modify/rep site's probe, its label a lea in one segment */
        /* (a group or a loop's probe, read up to its first store: within 80 bytes)                          */
        int cursor, len = rw_arm_lea(b, b[0]);
        if (j == k || label[i].pad < 1 || label[i].pad > 6 || !len || !in_code(m, l + 80) || !probe_form(b, len, &cursor))
            continue;
        struct rw_arm_entry *e = &label[heads++];
        e->at = l;
        e->insn = insn[j].at;
        e->runs = 0;
        e->byte = b[0];
        e->flags = RW_ARM_UNWIND_AT | (cursor >= 0 ? RW_ARM_LOOP : 0);
        e->cursor = cursor >= 0 ? (uint8_t)cursor : 0;
        e->pad = 0;
    }
    return heads;
}

/* One module: its probes' first labels into m->e (n entries, sorted). */
static void arm_module(struct armed_module *m, uint64_t bias, const unsigned char *t, uint32_t n)
{
    size_t bytes = pages((size_t)n * sizeof(struct rw_arm_entry));
    struct rw_arm_entry *label = rt_map(bytes), *insn = rt_map(bytes);
    if (!label || !insn) goto out;
    uint32_t heads = probe_heads(m, t, n, label, insn);
    if (heads && rw_arm_add(bias, label, heads)) {
        m->e = label;
        m->n = heads;
        m->bytes = bytes;
        label = NULL;
    }
out:
    if (label) mt_sys2(SYS_munmap, label, bytes);
    if (insn) mt_sys2(SYS_munmap, insn, bytes);
}

static int each_module(struct dl_phdr_info *o, size_t size, void *data)
{
    (void)size, (void)data;
    if (armed_count == MAX_MODULES) return 1;
    struct armed_module *m = &armed[armed_count];
    mt_memzero(m, sizeof *m);
    for (int s = 0; s < o->dlpi_phnum && m->segs < MAX_SEGMENTS; s++) {
        const ElfW(Phdr) *ph = &o->dlpi_phdr[s];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        m->seg_lo[m->segs] = o->dlpi_addr + ph->p_vaddr;
        m->seg_hi[m->segs] = o->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        m->seg_prot[m->segs++] = PROT_EXEC | (ph->p_flags & PF_R ? PROT_READ : 0) | (ph->p_flags & PF_W ? PROT_WRITE : 0);
    }
    /* the runtime itself, the vDSO (no file) and libraries without a site table are passed over */
    if (!m->segs || (m->seg_lo[0] <= rt.text_start && rt.text_start < m->seg_hi[m->segs - 1])) return 0;
    const char *path = o->dlpi_name && o->dlpi_name[0] ? o->dlpi_name : "/proc/self/exe";
    if (path[0] != '/') return 0;
    const unsigned char *t = NULL;
    uint32_t n = site_table(path, o->dlpi_addr, &t);
    if (!n) return 0;
    arm_module(m, o->dlpi_addr, t, n);
    if (m->e) armed_count++;
    return 0;
}

int rt_ccarm_prepare(void)
{
    dl_iterate_phdr(each_module, NULL);
    return armed_count > 0;
}

void rt_ccarm_write(void)
{
    for (int i = 0; i < armed_count; i++) {
        struct armed_module *m = &armed[i];
        for (int s = 0; s < m->segs; s++) {
            uint64_t lo = m->seg_lo[s] & ~((uint64_t)rt.page - 1), hi = pages(m->seg_hi[s]);
            /* the segment made writable once, every int3 stored; where the kernel refuses, a write each */
            int open = mt_sys3(SYS_mprotect, lo, hi - lo, PROT_READ | PROT_WRITE | PROT_EXEC) == 0;
            for (uint32_t k = 0; k < m->n; k++) {
                uint64_t at = m->e[k].at;
                if (at < m->seg_lo[s] || at >= m->seg_hi[s]) continue;
                if (open) *(volatile unsigned char *)(uintptr_t)at = 0xcc;
                else rw_arm_write(at, 0xcc);
            }
            if (open) mt_sys3(SYS_mprotect, lo, hi - lo, m->seg_prot[s]);
        }
        mt_sys2(SYS_munmap, m->e, m->bytes);
        m->e = NULL;
    }
}

/* ---- the loops that keep their cursor in a register (docs/compiled-in.md, "A loop's cursor") ------------ */
/* A program's signal handler, or a fatal signal, that lands inside such a loop must take the loop's register */
/* as the cursor (the one in memory is where the loop began); anywhere else no register is the cursor but a  */
/* probe's own in its window (rt_probe_window). Loops are made only in an executable's objects (their probes */
/* read the cursor at its link-time offset), so only the executable is read, and only when a signal first   */
/* needs it: the site table's probes (probe_heads), and around each loop's probes the entry's load `mov      */
/* %fs:tpoff,C` (after `push C`, up to 31 bytes of the loop's alignment before its label) and the exit's    */
/* store `mov C,%fs:tpoff` right after the back edge `jcc label`. From the entry's load to the exit's store  */
/* (itself included) C holds the loop's cursor.                                                              */
#define MAX_LOOPS 8192       /* loops of the executable known; past them a signal finds none (128 KB of .bss) */
#define LOOP_SCAN 65536      /* bytes from a loop's probe to its exit */

struct loop_range {
    uint64_t lo;             /* after the entry's load */
    uint32_t len;            /* to the exit's store, included */
    uint32_t reg;            /* C's signal-context index */
};

static struct {
    int state;               /* 0: not read, 1: being read, 2: read */
    struct armed_module exe; /* the executable's code (its segments only) */
    uint64_t bias;
    uint32_t n;
    struct loop_range r[MAX_LOOPS];
} loops;

/* `mov %fs:tpoff,C` (op 8b) or `mov C,%fs:tpoff` (op 89) at p, C x86 register r. */
static int cursor_move(const unsigned char *p, int op, int r, int32_t tpoff)
{
    return p[0] == 0x64 && p[1] == (0x48 | (r & 8) >> 1) && p[2] == op && p[3] == (0x04 | (r & 7) << 3) && p[4] == 0x25
           && field(p + 5) == tpoff;
}

/* The loop whose probe's first label is at, C its register (context index greg): *out, or 0. */
static int loop_extent(uint64_t at, int greg, struct loop_range *out)
{
    const struct armed_module *m = &loops.exe;
    int r = 0;
    while (r < 16 && mt_probe_greg(r) != greg) r++;
    int32_t tpoff = (int32_t)rt_cursor_tpoff();
    for (uint64_t x = at; x < at + LOOP_SCAN && in_code(m, x + 8); x++) {
        const unsigned char *p = (const unsigned char *)(uintptr_t)x;
        if (!cursor_move(p, 0x89, r, tpoff)) continue;
        /* the first store of C to the cursor after a loop's probe is its exit: the back edge right before */
        for (int form = 0; form < 2; form++) {
            uint64_t label;
            if (form == 0 && in_code(m, x - 2) && (p[-2] & 0xf0) == 0x70) label = x + (uint64_t)(int64_t)(signed char)p[-1];
            else if (form == 1 && in_code(m, x - 6) && p[-6] == 0x0f && (p[-5] & 0xf0) == 0x80)
                label = x + (uint64_t)(int64_t)field(p - 4);
            else continue;
            if (label > at || at - label > LOOP_SCAN) continue;
            for (uint64_t e = label - 9; e + 40 >= label && in_code(m, e - 2); e--) {
                const unsigned char *q = (const unsigned char *)(uintptr_t)e;
                int pushed = r < 8 ? q[-1] == 0x50 + r : q[-2] == 0x41 && q[-1] == 0x50 + (r & 7);
                if (!pushed || !cursor_move(q, 0x8b, r, tpoff)) continue;
                out->lo = e + 9;
                out->len = (uint32_t)(x - out->lo);
                out->reg = (uint32_t)greg;
                return 1;
            }
        }
        return 0;
    }
    return 0;
}

static void loops_read(void)
{
    const unsigned char *t = NULL;
    uint32_t n = site_table("/proc/self/exe", loops.bias, &t);
    if (!n) return;
    size_t bytes = pages((size_t)n * sizeof(struct rw_arm_entry));
    struct rw_arm_entry *label = rt_map(bytes), *insn = rt_map(bytes);
    if (label && insn) {
        uint32_t heads = probe_heads(&loops.exe, t, n, label, insn);
        uint64_t end = 0;
        for (uint32_t i = 0; i < heads && loops.n < MAX_LOOPS; i++) {
            if (!(label[i].flags & RW_ARM_LOOP) || label[i].at <= end) continue; /* a group's, or in the last loop */
            struct loop_range *l = &loops.r[loops.n];
            if (!loop_extent(label[i].at, label[i].cursor, l)) continue;
            end = l->lo + l->len;
            loops.n++;
        }
    }
    if (label) mt_sys2(SYS_munmap, label, bytes);
    if (insn) mt_sys2(SYS_munmap, insn, bytes);
}

/* Before any signal: the executable's code segments (dl_iterate_phdr lists the executable first). */
static int executable(struct dl_phdr_info *o, size_t size, void *data)
{
    (void)size, (void)data;
    struct armed_module *m = &loops.exe;
    for (int s = 0; s < o->dlpi_phnum && m->segs < MAX_SEGMENTS; s++) {
        const ElfW(Phdr) *ph = &o->dlpi_phdr[s];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        m->seg_lo[m->segs] = o->dlpi_addr + ph->p_vaddr;
        m->seg_hi[m->segs++] = o->dlpi_addr + ph->p_vaddr + ph->p_memsz;
    }
    loops.bias = o->dlpi_addr;
    return 1;
}

void rt_loops_init(void) { dl_iterate_phdr(executable, NULL); }

int rt_loop_register(uint64_t pc)
{
    if (!in_code(&loops.exe, pc)) return -1;
    if (__atomic_load_n(&loops.state, __ATOMIC_ACQUIRE) != 2) {
        int none = 0;
        if (__atomic_compare_exchange_n(&loops.state, &none, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            uint64_t old = rt_block_signals(); /* no handler of this thread finds it half read */
            loops_read();
            rt_restore_signals(old);
            __atomic_store_n(&loops.state, 2, __ATOMIC_RELEASE);
        } else {
            while (__atomic_load_n(&loops.state, __ATOMIC_ACQUIRE) != 2) mt_sys0(SYS_sched_yield);
        }
    }
    uint32_t lo = 0, hi = loops.n; /* the last range starting at or before pc */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (loops.r[mid].lo <= pc) lo = mid + 1;
        else hi = mid;
    }
    if (!lo) return -1;
    const struct loop_range *l = &loops.r[lo - 1];
    return pc - l->lo <= l->len ? (int)l->reg : -1;
}
