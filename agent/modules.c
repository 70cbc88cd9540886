/*
 * memtrace agent, modules and the memory map: at start and after each dlopen, one MT_MODULE record per
 * newly loaded object (path, load bias, GNU build-id) and one MT_MAPPING record per line of
 * /proc/self/maps (read with raw system calls), marked MT_MAP_TRACED where the memory is traced. At start
 * the data of the loaded objects (their non-executable PT_LOAD spans: data, bss, relro, rodata) and the
 * [heap] join the traced set; the agent itself, the dynamic loader, the vdso and the decoder never do.
 *
 * What it gets wrong: at most 512 data spans and a 1 MiB maps file are read; mappings made by other means
 * than the wrappers between scans are only seen at the next scan.
 */
#include "agent.h"

/* ------------------------------------------------------------------------------------------------ */
/* Modules and the memory map                                                                       */

struct map_line {
    uintptr_t start, end, offset;
    int prot;
    int is_private;
    char path[256];
};

/* A hexadecimal field of a maps line, up to `stop`; *p is left at the stop character. */
static uintptr_t parse_hex(char **p, char stop)
{
    char *c = *p;
    uintptr_t v = 0;
    for (; *c && *c != stop; c++) v = v * 16 + (uintptr_t)(*c <= '9' ? *c - '0' : (*c | 32) - 'a' + 10);
    *p = c;
    return v;
}

/* Calls fn for each /proc/self/maps line; the file is read with raw syscalls into a private buffer. */
static void for_each_map(void (*fn)(const struct map_line *, void *), void *arg)
{
    int fd = (int)mt_sys3(SYS_open, "/proc/self/maps", O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) return;
    size_t cap = 1 << 20;
    char *buf = agent_map(cap);
    if (!buf) { mt_sys1(SYS_close, fd); return; }
    size_t len = 0;
    for (;;) {
        long n = mt_sys3(SYS_read, fd, buf + len, cap - len - 1);
        if (n <= 0) break;
        len += (size_t)n;
        if (len >= cap - 1) break;
    }
    mt_sys1(SYS_close, fd);
    buf[len] = 0;
    char *p = buf;
    while (*p) {
        struct map_line m;
        mt_memzero(&m, sizeof m);
        m.start = parse_hex(&p, '-'); p++;
        m.end = parse_hex(&p, ' '); p++;
        m.prot = (p[0] == 'r' ? PROT_READ : 0) | (p[1] == 'w' ? PROT_WRITE : 0) | (p[2] == 'x' ? PROT_EXEC : 0);
        m.is_private = p[3] == 'p';
        p += 5;
        m.offset = parse_hex(&p, ' ');
        for (int f = 0; f < 2; f++) { while (*p == ' ') p++; while (*p && *p != ' ') p++; } /* dev, inode */
        while (*p == ' ') p++;
        size_t k = 0;
        while (*p && *p != '\n') { if (k < sizeof m.path - 1) m.path[k++] = *p; p++; }
        if (*p) p++;
        fn(&m, arg);
    }
    mt_sys2(SYS_munmap, buf, cap);
}

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

static int collect_spans(struct dl_phdr_info *info, size_t size, void *arg)
{
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

static void report_mapping(const struct map_line *m, void *arg)
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
    REC(MT_MAPPING, struct mt_mapping, r);
    r.h.flags = traced ? MT_MAP_TRACED : 0;
    r.start = m->start;
    r.end = m->end;
    r.offset = m->offset;
    r.prot = (uint32_t)m->prot;
    size_t n = mt_strlen(m->path);
    r.path_len = (uint32_t)n;
    emit_with_tail(&r, sizeof r, NULL, 0, m->path, n);
}

static int report_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    int *index = arg;
    if ((*index)++ < g.reported_modules) return 0;
    char exe[512];
    const char *name = mt_module_name(info, exe, sizeof exe);
    uint32_t bid_len;
    const unsigned char *bid = mt_build_id(info, &bid_len);
    REC(MT_MODULE, struct mt_module, r);
    r.load_bias = info->dlpi_addr;
    r.build_id_len = bid_len;
    size_t n = mt_strlen(name);
    r.path_len = (uint32_t)n;
    emit_with_tail(&r, sizeof r, bid, bid_len, name, n);
    return 0;
}

/* Reports modules loaded since the last call and, when asked, adds their data to the traced set. */
void scan_new_modules(int initial)
{
    int index = 0;
    ndata_spans = 0;
    dl_iterate_phdr(collect_spans, NULL);
    dl_iterate_phdr(report_module, &index);
    g.reported_modules = index;
    enter_critical();
    spin_lock(&g.lock);
    for_each_map(report_mapping, &initial);
    spin_unlock(&g.lock);
    leave_critical();
}

