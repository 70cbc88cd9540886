/*
 * check_symglobals.c: `memtrace run --check`'s global buffer overflows in rewrite mode (docs/check.md, "Globals in
 * rewrite mode"), for a binary nobody rebuilt: gcc laid its globals out without redzones, but it did leave
 * alignment padding between many of them (an array of 32 bytes or more starts on a 32-byte boundary, so
 * `int counts[10]` is followed by 24 bytes nobody owns). That padding is poisoned here as the global redzones
 * (0xf9) of the object before it, as ASan would for globals it did not compile if it could prove the gap, so the
 * rewrite's check trampolines (every access through a register) and the libc wrappers (memset, strcpy, fgets,
 * read ... by their ranges) report an access there as that global's overflow, or the next one's underflow:
 *   memtrace: global overflow: counts+40 (a global of 40 bytes) written 4 bytes, 0 bytes past its end, at
 *   globals+4533, thread 8104
 *
 * Which modules: the executable and every library the loader mapped at start but glibc's and memtrace's own
 * (as the rewrite plans them), each read from its file's .symtab (by common/mt_elf.c, which checks every offset
 * against the file: a truncated or crafted library gets nothing here, never a read past its parts). Which
 * gaps (the reading chosen): between two OBJECT symbols of non-zero size in the same .data or .bss section, when no other symbol of any kind (a label
 * of no size, an assembler object without .size, a linker-defined marker) starts in the gap and the gap is
 * shorter than the next object's alignment as its address shows (the largest power of two dividing it, at most
 * 64): padding an aligned object explains. A module without .symtab (stripped: its .dynsym lists exported
 * objects only, so a gap may hold a static one) gets nothing; .rodata gets nothing (gcc's string literals and
 * constants there have no symbols); neither does the space before a section's first object or after its last.
 * A granule (8 bytes) shared by the gap and the next object stays addressable; the one shared with the object
 * before says how many of its bytes are (shadow 1..7), as for a heap block's end. The padding after crtstuff's
 * __dso_handle (8 bytes, no size in .symtab), before .data's first object, is that object's left redzone.
 * The libc wrappers' ranges the shadow passed are also checked against the global they start in
 * (mc_symglobal_check): one that runs past its end is its overflow even with no padding after it:
 *   memtrace: global overflow: label+16 (a global of 16 bytes) written 21 bytes by strcpy, 0 bytes past its
 *   end, at extra+4815, thread 8104
 *
 * What it gets wrong: a direct load or store that lands in the next object without touching padding (globals
 * that follow each other with no gap: `history[32]` of shorts, 64 bytes, with a 32-aligned neighbour right after
 * it; a one-past read when the next global starts in the same granule); underflows of .bss's first object and
 * of one after any other symbol of no size;
 * accesses RIP-relative or absolute (`mov %eax, counts+40(%rip)`: an unrolled loop's constant index), which the
 * rewrite does not patch; names have no definition site (no DWARF is read), and a static `history.0` is said
 * `history`, as fault mode says it (agent/check_globals.c).
 */
#include <link.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"
#include "mt_elf.h"

int mc_snprintf(char *d, size_t n, const char *fmt, ...);


struct gobj { uintptr_t beg, end; uint32_t name; uint16_t sec; uint16_t marker; };

/* glibc's libraries and memtrace's own: not planned by a check run (ModuleRewrite.unchecked), left alone here */
static int left_alone(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    static const char *const glibc[] = {"libc.so", "libm.so", "libmvec.so", "libpthread.so", "libdl.so", "librt.so",
        "libresolv.so", "libanl.so", "libutil.so", "libBrokenLocale.so", "libthread_db.so", "libmemusage.so",
        "libpcprofile.so", "libSegFault.so", "libc_malloc_debug.so"};
    for (size_t i = 0; i < sizeof glibc / sizeof *glibc; i++) {
        size_t k = strlen(glibc[i]);
        if (strncmp(b, glibc[i], k) == 0 && (b[k] == 0 || b[k] == '.')) return 1;
    }
    return strncmp(b, "libnss_", 7) == 0 || strncmp(b, "ld-linux", 8) == 0 || strncmp(b, "libmemtrace-", 12) == 0 ||
           strncmp(b, "linux-vdso", 10) == 0 || strstr(path, "/gconv/") != NULL;
}

static int section_is(const char *n, const char *want)
{
    size_t k = strlen(want);
    return strncmp(n, want, k) == 0 && (n[k] == 0 || n[k] == '.');
}

/* insertion into a sorted run would be quadratic on a big .symtab: a shell sort, by start then objects first */
static void sort(struct gobj *v, size_t n)
{
    for (size_t gap = n / 2; gap; gap /= 2)
        for (size_t i = gap; i < n; i++)
            for (size_t j = i; j >= gap && (v[j - gap].beg > v[j].beg || (v[j - gap].beg == v[j].beg && v[j - gap].marker > v[j].marker)); j -= gap) {
                struct gobj t = v[j];
                v[j] = v[j - gap];
                v[j - gap] = t;
            }
}

/* the largest power of two dividing a, at most 64 */
static uintptr_t alignment(uintptr_t a)
{
    uintptr_t al = a & -a;
    return al && al < 64 ? al : 64;
}

/* The objects of every module, sorted by start, for the libc wrappers' object-level check (mc_symglobal_check):
 * a range that starts inside a global must end inside it, whether or not padding follows. ends[i] is the
 * largest end of objects 0..i, so that an object nested in or overlapping a larger one never looks overrun. */
static struct { const struct asan_global *g; uintptr_t *ends; size_t n; } mods[64];
static int nmods;

static void note_module(const struct asan_global *g, size_t n)
{
    if (!n || nmods >= (int)(sizeof mods / sizeof *mods)) return;
    uintptr_t *ends = mmap(NULL, n * sizeof *ends, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ends == MAP_FAILED) return;
    for (size_t i = 0; i < n; i++) {
        uintptr_t e = g[i].beg + g[i].size;
        ends[i] = i && ends[i - 1] > e ? ends[i - 1] : e;
    }
    mods[nmods].g = g;
    mods[nmods].ends = ends;
    mods[nmods].n = n;
    nmods++;
}

/* crtbeginS.o's __dso_handle (`void *__dso_handle = &__dso_handle`, the first quad of an executable's .data)
 * has no size in .symtab, so the gap after it would not count as padding; it is 8 bytes, and the padding from
 * there to the next object (level_table-8 at -O0 and -O2: an index of -1 into .data's first array) is poisoned
 * as that object's left redzone (no object noted before it: the reports say the next one's underflow). */
static void dso_handle_guard(const struct mt_elf *e, const struct gobj *v, size_t k)
{
    for (size_t i = 0; i + 1 < k; i++) {
        if (!v[i].marker || v[i].name >= e->nstr || strcmp(e->str + v[i].name, "__dso_handle") != 0)
            continue;
        const struct gobj *next = &v[i + 1];
        uintptr_t end = v[i].beg + 8;
        if ((v[i].beg & 7) || next->sec != v[i].sec || next->marker || next->beg <= end || next->beg - end >= alignment(next->beg))
            return;
        uintptr_t stop = next->beg & ~(uintptr_t)7;
        if (stop > end && mc_addressable_range(end) && mc_addressable_range(next->beg)) mc_poison(end, stop - end, MC_GLOBAL_RZ);
        return;
    }
}

/* A libc wrapper's range [p, p+n), which the shadow passed, that starts inside a global of a module read here and
 * runs past its end into whatever follows (the next global, with no padding between: strcpy into name_buffer[16]
 * then kept.0): that global's overflow, reported as the object the pointer came from (Spindle's object-level
 * check). 1 when reported. */
int mc_symglobal_check(uintptr_t p, size_t n, enum mc_access access, const void *pc, const char *by)
{
    for (int m = 0; m < nmods; m++) {
        const struct asan_global *g = mods[m].g;
        size_t lo = 0, hi = mods[m].n;
        if (!hi || p < g[0].beg || p >= mods[m].ends[hi - 1]) continue;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (g[mid].beg <= p) lo = mid + 1; else hi = mid;
        }
        if (!lo || mods[m].ends[lo - 1] <= p || n <= mods[m].ends[lo - 1] - p) return 0; /* in none, or fits */
        size_t i = lo - 1; /* the object that ends last of those starting at or before p: it holds p */
        while (i && g[i].beg + g[i].size != mods[m].ends[lo - 1]) i--;
        struct mc_extent x;
        __builtin_memset(&x, 0, sizeof x);
        x.beg = g[i].beg;
        x.size = g[i].size;
        x.region = "global";
        mc_snprintf(x.name, sizeof x.name, "%s", g[i].name);
        mc_snprintf(x.desc, sizeof x.desc, "a global of %lu bytes", (unsigned long)g[i].size);
        mc_report_extent(p, n, access, pc, by, &x);
        return 1;
    }
    return 0;
}

/* One module's gaps poisoned and its objects noted for the reports. e: its file's headers and .symtab, as the */
/* bounded reader (common/mt_elf.c) read them. */
static void module_globals(const struct mt_elf *e, uintptr_t bias)
{
    const Elf64_Shdr *sh = e->sh;
    if (!e->sym || !e->shstr) return;
    unsigned char data[65536 / 8] = {0}; /* which sections are .data or .bss */
    for (unsigned i = 0; i < e->nsh; i++) {
        const char *nm = mt_elf_section_name(e, i);
        if ((sh[i].sh_flags & (SHF_ALLOC | SHF_WRITE | SHF_TLS)) == (SHF_ALLOC | SHF_WRITE) && (section_is(nm, ".data") || section_is(nm, ".bss")))
            data[i >> 3] |= (unsigned char)(1 << (i & 7));
    }
    const Elf64_Sym *sy = e->sym;
    size_t count = e->nsym, n = 0;
    for (size_t i = 0; i < count; i++) {
        unsigned s = mt_elf_sym_section(e, &sy[i]);
        n += s && (data[s >> 3] >> (s & 7) & 1);
    }
    if (!n) return;
    struct gobj *v = mmap(NULL, n * sizeof *v, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (v == MAP_FAILED) return;
    size_t k = 0, objects = 0;
    for (size_t i = 0; i < count && k < n; i++) {
        unsigned s = mt_elf_sym_section(e, &sy[i]), type = ELF64_ST_TYPE(sy[i].st_info);
        if (!(s && (data[s >> 3] >> (s & 7) & 1)) || type == STT_SECTION || type == STT_FILE) continue;
        int object = type == STT_OBJECT && sy[i].st_size && sy[i].st_name < e->nstr;
        v[k++] = (struct gobj){bias + sy[i].st_value, bias + sy[i].st_value + (object ? sy[i].st_size : 0), sy[i].st_name, (uint16_t)s, (uint16_t)!object};
        objects += object;
    }
    sort(v, k);
    /* descriptors and their names (a static's `.N` suffix dropped), where the reports look globals up */
    size_t bytes = objects * sizeof(struct asan_global);
    for (size_t i = 0; i < k; i++) if (!v[i].marker) bytes += strlen(e->str + v[i].name) + 1;
    struct asan_global *g = objects ? mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : MAP_FAILED;
    if (g == MAP_FAILED) { munmap(v, n * sizeof *v); return; }
    char *names_at = (char *)(g + objects);
    size_t ng = 0;
    for (size_t i = 0; i < k; i++) {
        if (v[i].marker) continue;
        const char *nm = e->str + v[i].name;
        size_t l = strlen(nm), d = l;
        while (d && nm[d - 1] >= '0' && nm[d - 1] <= '9') d--;
        if (d < l && d > 1 && nm[d - 1] == '.') l = d - 1;
        memcpy(names_at, nm, l);
        names_at[l] = 0;
        struct asan_global *o = &g[ng++];
        *o = (struct asan_global){.beg = v[i].beg, .size = v[i].end - v[i].beg, .size_with_redzone = v[i].end - v[i].beg, .name = names_at};
        names_at += l + 1;
        /* the gap up to the next symbol of the same section: every object ending in it (aliases, overlaps) */
        /* must end by then, and it must be alignment padding: then it is this object's redzone            */
        uintptr_t end = v[i].end;
        size_t j = i + 1;
        for (; j < k && v[j].sec == v[i].sec && v[j].beg < end; j++)
            if (v[j].end > end) end = v[j].end;
        if (j >= k || v[j].sec != v[i].sec || v[j].marker || v[j].beg <= end || v[j].beg - end >= alignment(v[j].beg)) continue;
        if (end != v[i].end) continue; /* an overlapping object ends later: its padding, named by it */
        uintptr_t next = v[j].beg, rz = (end + 7) & ~(uintptr_t)7, stop = next & ~(uintptr_t)7;
        if (!mc_addressable_range(end) || !mc_addressable_range(next)) continue;
        if ((end & 7) && rz <= next) *MC_SHADOW(end & ~(uintptr_t)7) = (uint8_t)(end & 7);
        if (stop > rz) mc_poison(rz, stop - rz, MC_GLOBAL_RZ);
        if (stop > rz || ((end & 7) && rz <= next)) o->size_with_redzone = next - o->beg;
    }
    for (size_t i = 0; i < ng; i++) mc_note_global(&g[i]);
    dso_handle_guard(e, v, k);
    note_module(g, ng);
    munmap(v, n * sizeof *v);
}

static int each_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    int *first = arg;
    const char *path = *first ? "/proc/self/exe" : info->dlpi_name;
    int exe = *first;
    *first = 0;
    if (!path || !*path || (!exe && left_alone(path))) return 0;
    struct mt_elf e;
    if (mt_elf_read(path, 0, &e) != 0) return 0;
    module_globals(&e, info->dlpi_addr);
    mt_elf_free(&e);
    return 0;
}

/* Called by __memtrace_check_init, before main, in a rewrite run only (a --check build has gcc's redzones). */
void mc_symglobals_init(void)
{
    int first = 1;
    dl_iterate_phdr(each_module, &first);
}
