/*
 * mt_maps.c (shared by the agent, the runtime and the check runtime): /proc/self/maps read with raw system
 * calls into memtrace's own pages and cut into lines, each handed to a callback as a struct mt_map_line
 * (start, end, offset, prot, private, path). Its users: the MT_MAPPING records (mt_proc.c's callers) and the
 * leak scan's anonymous roots (check/check_block.h, mc_scan_anon).
 *
 * What it gets wrong: a maps file past 1 MiB is cut there (its last lines are not seen); a path is cut at
 * MT_PATH_MAX (1,024 bytes).
 */
#include <fcntl.h>
#include <sys/mman.h>

#include "mt_common.h"

/* A hexadecimal field of a maps line, up to `stop`; *p is left at the stop character. */
static uintptr_t parse_hex(const char **p, char stop)
{
    const char *c = *p;
    uintptr_t v = 0;
    for (; *c && *c != stop; c++) v = v * 16 + (uintptr_t)(*c <= '9' ? *c - '0' : (*c | 32) - 'a' + 10);
    *p = c;
    return v;
}

int mt_maps_each(void (*fn)(const struct mt_map_line *, void *), void *arg)
{
    size_t cap = 1 << 20;
    char *buf = mt_map_pages(cap);
    if (!buf) return -1;
    int rc = mt_maps_each_in(buf, cap, fn, arg);
    mt_unmap_pages(buf, cap);
    return rc;
}

int mt_maps_each_in(char *buf, size_t cap, void (*fn)(const struct mt_map_line *, void *), void *arg)
{
    int fd = (int)mt_sys4(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) return -1;
    size_t len = 0;
    for (long n; len < cap - 1 && (n = mt_sys3(SYS_read, fd, buf + len, cap - 1 - len)) > 0;) len += (size_t)n;
    mt_sys1(SYS_close, fd);
    buf[len] = 0;
    struct mt_map_line m;
    for (const char *p = buf; *p;) {
        mt_memzero(&m, sizeof m - sizeof m.path);
        m.start = parse_hex(&p, '-'); if (*p) p++;
        m.end = parse_hex(&p, ' '); if (*p) p++;
        for (int i = 0; i < 5; i++) if (!p[i]) goto cut; /* a line cut at the buffer's end */
        m.prot = (p[0] == 'r' ? PROT_READ : 0) | (p[1] == 'w' ? PROT_WRITE : 0) | (p[2] == 'x' ? PROT_EXEC : 0);
        m.is_private = p[3] == 'p';
        p += 5;
        m.offset = parse_hex(&p, ' ');
        for (int f = 0; f < 2; f++) { while (*p == ' ') p++; while (*p && *p != ' ') p++; } /* dev, inode */
        while (*p == ' ') p++;
        size_t k = 0;
        while (*p && *p != '\n') { if (k < MT_PATH_MAX) m.path[k++] = *p; p++; }
        m.path[k] = 0;
        m.path_len = k;
        if (*p) p++;
        MT_ASSERT(m.start < m.end && !(m.start & 0xfff) && !(m.end & 0xfff), "a maps line spans whole pages");
        fn(&m, arg);
    }
cut:
    return 0;
}
