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
 * How it reads: nothing on stderr; the stacks are MT_CONTEXT records, which Java joins to the records that
 * follow (analysis.Interpretation), as rewrite mode's.
 *
 * What it gets wrong: modules loaded by dlopen after start are not armed (their accesses have no callers);
 * skeleton sites (kinds 7-9) are not armed; a label that is not a REX.W lea (a build older than the site
 * table's forms) is left alone; the module's code pages written (one byte per probe) become the process's
 * own; the first RW_ARM_RUNS executions are counted while recording is stopped too (MEMTRACE_AUTOSTART=0); a
 * debugger that stops on SIGTRAP stops at each armed execution; a probe run with SIGTRAP blocked by a raw
 * system call kills the process (as rewrite mode's traps); objects past the 64th with a site table are not
 * armed.
 */
#include <link.h>
#include <sys/mman.h>

#include "rt.h"
#include "mt_elf.h"

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

/* One module: its probes' first labels into m->e (n entries, sorted). */
static void arm_module(struct armed_module *m, uint64_t bias, const unsigned char *t, uint32_t n)
{
    size_t bytes = pages((size_t)n * sizeof(struct rw_arm_entry));
    struct rw_arm_entry *label = rt_map(bytes), *insn = rt_map(bytes);
    if (!label || !insn) goto out;
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
