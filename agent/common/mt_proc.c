/*
 * mt_proc.c (shared by the agent and the runtime): the process as it describes itself to a trace. Numbers
 * from the environment (its /proc/self/maps lines are mt_maps.c's); loaded objects walked with
 * dl_iterate_phdr (new ones since the last walk); the library's own code found by an address inside it;
 * the path behind a file descriptor. It builds the MT_MODULE and MT_MAPPING records from them, so the two
 * libraries write those records one way.
 *
 * How its output reads: mt_module_record lays out {header, load bias, build-id length, path length} and
 * the tail build-id bytes then path bytes (no NUL), padded to 8; mt_mapping_record {header, start, end,
 * offset, prot, path length} and the path (include/memtrace_stream.h). The thread id is the sender's.
 *
 * What it gets wrong: paths are
 * cut at MT_PATH_MAX (1,024 bytes) and build-ids at 64; mt_parse_long reads the leading decimal digits
 * and nothing else, so "-1" or "abc" read as 0 rather than as the default (the variables it reads are
 * memtrace's own, which it writes as plain numbers). mt_modules_new counts objects, so an object
 * unloaded by dlclose and another loaded after it may be missed.
 */
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>

#include "mt_common.h"

long mt_parse_long(const char *s, long dflt)
{
    if (!s || !*s) return dflt;
    long v = 0;
    while (*s >= '0' && *s <= '9') v = v * 10 + (*s++ - '0');
    return v;
}

static size_t pad8(size_t n) { return (n + 7) & ~(size_t)7; }

size_t mt_module_record(struct mt_module_rec *r, uint64_t bias, const unsigned char *bid, uint32_t bid_len,
                        const char *name, size_t n)
{
    if (bid_len > 64) bid_len = 64;
    if (n > MT_PATH_MAX) n = MT_PATH_MAX;
    size_t size = pad8(sizeof r->m + bid_len + n);
    mt_memzero(r, size);
    r->m.h.type = MT_MODULE;
    r->m.h.size = (uint16_t)size;
    r->m.load_bias = bias;
    r->m.build_id_len = bid_len;
    r->m.path_len = (uint32_t)n;
    mt_memcpy(r->tail, bid, bid_len);
    mt_memcpy(r->tail + bid_len, name, n);
    MT_ASSERT(size <= sizeof *r, "a module record fits its buffer");
    return size;
}

size_t mt_mapping_record(struct mt_mapping_rec *r, const struct mt_map_line *line, int flags)
{
    size_t n = line->path_len > MT_PATH_MAX ? MT_PATH_MAX : line->path_len;
    size_t size = pad8(sizeof r->m + n);
    mt_memzero(r, size);
    r->m.h.type = MT_MAPPING;
    r->m.h.flags = (uint8_t)flags;
    r->m.h.size = (uint16_t)size;
    r->m.start = line->start;
    r->m.end = line->end;
    r->m.offset = line->offset;
    r->m.prot = (uint32_t)line->prot;
    r->m.path_len = (uint32_t)n;
    mt_memcpy(r->tail, line->path, n);
    return size;
}

size_t mt_file_mapping_record(struct mt_mapping_rec *r, uintptr_t start, uintptr_t end, int prot, int fd,
                              off_t off, int flags)
{
    char link[32] = "/proc/self/fd/";
    char digits[12];
    int n = 0, at = 14;
    unsigned v = (unsigned)fd;
    do { digits[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    while (n) link[at++] = digits[--n];
    link[at] = 0;
    struct mt_map_line line;
    long len = mt_sys3(SYS_readlink, link, line.path, MT_PATH_MAX);
    if (len <= 0) return 0;
    line.start = start;
    line.end = end;
    line.offset = (uintptr_t)off;
    line.prot = prot;
    line.path_len = (size_t)len;
    return mt_mapping_record(r, &line, flags);
}

struct walk {
    int index, reported;
    void (*fn)(const struct mt_module_info *, void *);
    void *arg;
};

static int walk_one(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct walk *w = arg;
    if (w->index++ < w->reported) return 0;
    char exe[MT_PATH_MAX + 1];
    struct mt_module_info m;
    m.bias = info->dlpi_addr;
    m.build_id = mt_build_id(info, &m.build_id_len);
    m.name = mt_module_name(info, exe, sizeof exe);
    m.name_len = mt_strlen(m.name);
    mt_unwind_add_module(info); /* the allocation stacks' walk may pass through it (mt_unwind.c) */
    w->fn(&m, w->arg);
    return 0;
}

void mt_modules_new(int *reported, void (*fn)(const struct mt_module_info *, void *), void *arg)
{
    struct walk w = {0, *reported, fn, arg};
    dl_iterate_phdr(walk_one, &w);
    *reported = w.index;
}

struct own {
    uintptr_t inside;
    uint64_t start, end;
    char *path;
    size_t cap;
};

static int find_own(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct own *o = arg;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        uintptr_t s = info->dlpi_addr + ph->p_vaddr, e = s + ph->p_memsz;
        if (o->inside < s || o->inside >= e) continue;
        o->start = s;
        o->end = e;
        if (o->path && o->cap) {
            size_t n = info->dlpi_name ? mt_strlen(info->dlpi_name) : 0;
            if (n >= o->cap) n = o->cap - 1;
            mt_memcpy(o->path, info->dlpi_name, n);
            o->path[n] = 0;
        }
        return 1;
    }
    return 0;
}

int mt_own_text(const void *inside, uint64_t *start, uint64_t *end, char *path, size_t cap)
{
    struct own o = {(uintptr_t)inside, 0, 0, path, cap};
    if (!dl_iterate_phdr(find_own, &o)) return 0;
    *start = o.start;
    *end = o.end;
    return 1;
}
