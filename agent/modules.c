/*
 * memtrace agent, modules and the memory map: at start and after each dlopen, one MT_MODULE record per
 * newly loaded object (path, load bias, GNU build-id) and one MT_MAPPING record per line of
 * /proc/self/maps (read with raw system calls), marked MT_MAP_TRACED where the memory is traced. At start
 * the data of the loaded objects (their non-executable PT_LOAD spans: data, bss, relro, rodata) and the
 * [heap] join the traced set; the agent itself, the dynamic loader, the vdso and the decoder never do.
 *
 * The maps file is read, and the records built, by the layer it shares with the runtime (common/mt_proc.c).
 *
 * What it gets wrong: at most 512 data spans and a 1 MiB maps file are read; mappings made by other means
 * than the wrappers between scans are only seen at the next scan.
 */
#include "agent.h"

/* ------------------------------------------------------------------------------------------------ */
/* Modules and the memory map                                                                       */

/* Non-executable PT_LOAD spans of the loaded objects other than the agent and the dynamic loader:   */
/* the memory the DATA region means (data, bss, relro, rodata).                                      */
struct span { uintptr_t s, e; };
static struct span data_spans[512];
static int ndata_spans;
uintptr_t ldso_base;   /* the dynamic loader (AT_BASE): never traced */

static int is_excluded_object(struct dl_phdr_info *info)
{
    if (info->dlpi_addr == ldso_base && ldso_base) return 1;
    const char *n = info->dlpi_name;
    if (n && n[0] && mt_strncmp(n, g.self_path, sizeof g.self_path) == 0) return 1;
    if (n && mt_strncmp(n, "linux-vdso", 10) == 0) return 1;
    if (is_decoder_object(info->dlpi_addr)) return 1;
    for (int i = 0; i < info->dlpi_phnum; i++) /* the dynamic loader, by its own PT_LOAD at ldso_base */
        if (info->dlpi_phdr[i].p_type == PT_LOAD && info->dlpi_addr + info->dlpi_phdr[i].p_vaddr == ldso_base)
            return 1;
    return 0;
}

/* run --check: the executable's writable data past its relro part (.data, .bss), whose globals         */
/* check_globals.c checks; no library's, no read-only data (each access to traced memory costs a fault). */
static int collect_check_spans(struct dl_phdr_info *info)
{
    if (info->dlpi_name && info->dlpi_name[0]) return 1; /* the executable comes first */
    uintptr_t relro_end = 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO)
            relro_end = page_up(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr + info->dlpi_phdr[i].p_memsz);
    for (int i = 0; i < info->dlpi_phnum && ndata_spans < 512; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || (ph->p_flags & PF_X) || !(ph->p_flags & PF_W)) continue;
        uintptr_t s = page_down(info->dlpi_addr + ph->p_vaddr), e = page_up(info->dlpi_addr + ph->p_vaddr + ph->p_memsz);
        if (relro_end > s && relro_end <= e) s = relro_end;
        if (s < e) data_spans[ndata_spans++] = (struct span){s, e};
    }
    return 1;
}

static int collect_spans(struct dl_phdr_info *info, size_t size, void *arg)
{
    if (chk.on) return collect_check_spans(info);
    if (is_excluded_object(info)) return 0;
    for (int i = 0; i < info->dlpi_phnum && ndata_spans < 512; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || (ph->p_flags & PF_X)) continue;
        data_spans[ndata_spans++] = (struct span){page_down(info->dlpi_addr + ph->p_vaddr),
                                                  page_up(info->dlpi_addr + ph->p_vaddr + ph->p_memsz)};
    }
    return 0;
}

/* The end of the data span (one PT_LOAD) that holds a, or 0. */
uintptr_t data_span_end(uintptr_t a)
{
    for (int i = 0; i < ndata_spans; i++)
        if (data_spans[i].s <= a && a < data_spans[i].e) return data_spans[i].e;
    return 0;
}

static int in_data_span(uintptr_t s, uintptr_t e)
{
    for (int i = 0; i < ndata_spans; i++)
        if (data_spans[i].s <= s && e <= data_spans[i].e) return 1;
    return 0;
}

static void report_mapping(const struct mt_map_line *m, void *arg)
{
    int *initial = arg;
    int traced = 0;
    int is_ring = m->start == (uintptr_t)g.ring;
    if (!is_ring && !(m->prot & PROT_EXEC) && (m->prot & (PROT_READ | PROT_WRITE))) {
        int kind = 0;
        if (in_data_span(m->start, m->end)) kind = MT_REGION_DATA;
        else if (mt_strncmp(m->path, "[heap]", 7) == 0) kind = MT_REGION_HEAP;
        if (kind && *initial && !set_find(m->start)) {
            set_add_locked(m->start, m->end, m->prot, kind);
        }
        traced = set_find(m->start) != NULL;
    }
    struct mt_mapping_rec r;
    mt_mapping_record(&r, m, traced ? MT_MAP_TRACED : 0);
    emit(&r);
}

static void report_module(const struct mt_module_info *m, void *arg)
{
    struct mt_module_rec r;
    mt_module_record(&r, m->bias, m->build_id, m->build_id_len, m->name, m->name_len);
    emit(&r);
}

/* Reports modules loaded since the last call and, when asked, adds their data to the traced set. */
void scan_new_modules(int initial)
{
    ndata_spans = 0;
    dl_iterate_phdr(collect_spans, NULL);
    mt_modules_new(&g.reported_modules, report_module, NULL);
    enter_critical();
    spin_lock(&g.lock);
    mt_maps_each(report_mapping, &initial);
    spin_unlock(&g.lock);
    leave_critical();
}

