/*
 * check_objects.c: what an address the checker reports is (check_report.h lists the files that make the
 * reports), and so which kind of error an access there is. By the shadow byte at the first bad address:
 * a heap block's redzones or freed memory (the block's header names it: heap overflow, underflow, use after
 * free), a global's redzone (gcc's descriptors, registered at start: global overflow, or the underflow of
 * the next global when the address is nearer its start), a stack frame's redzones (the frame description gcc
 * stores at the frame's 32-byte aligned base, found by walking the shadow down: stack overflow, underflow,
 * use after scope, use after return in a fake frame), an alloca's, the page at 0 (null dereference), else a
 * wild access. Names are memtrace's (docs/naming.md): heap blocks <malloc0002@bad+26> by the process's
 * allocation counter and the allocating call's site; globals by name (a string literal by its text); stack
 * variables <stack:buf@bad>.
 *
 * Output: the object's name, its description ("a block of 50 bytes, allocated at x.c:28", "a variable of 8
 * bytes, declared at line 12 of bad"), the offset and the distance past its end or before its start, which
 * check_report.c and check_misuse.c word into their lines and JSON records.
 *
 * What it gets wrong: a stack object is found only in a frame gcc laid out (checked code), and the frame walk
 * gives up 512 KB below the address; the variable named is the frame's nearest to the address, which after a
 * far overflow may be another than the one overflowed; an alloca's size is read from the shadow, so a partly
 * poisoned one reads short.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "check_report.h"

/* the globals gcc registered (check_shadow.c, __asan_register_globals) */
#define MAX_GLOBALS 65536
static const struct asan_global *globals[MAX_GLOBALS];
static int nglobals;

void mc_note_global(const void *g)
{
    if (nglobals < MAX_GLOBALS) globals[nglobals++] = g;
}

void mc_forget_globals(const void *g, size_t n)
{
    const struct asan_global *first = g, *end = first + n;
    int k = 0;
    for (int i = 0; i < nglobals; i++)
        if (globals[i] < first || globals[i] >= end) globals[k++] = globals[i];
    nglobals = k;
}

static void block_name(const struct mc_block *b, int freed, char *out, size_t n)
{
    char code[1024];
    const char *line;
    mc_name_code(b->alloc_pc, 1, code, sizeof code, &line, NULL);
    static const char *kinds[] = {"malloc", "calloc", "realloc", "malloc", "new"};
    const char *k = b->family == MC_NEW_ARRAY ? "new[]" : kinds[b->fn < 5 ? b->fn : 0];
    if (freed) snprintf(out, n, "<freed:%04u@%s>", b->number, code);
    else snprintf(out, n, "<%s%04u@%s>", k, b->number, code);
}

void mc_describe_block(const struct mc_block *b, struct mc_object *o)
{
    char at[1024], fat[1024];
    int freed = b->magic == MC_QUARANTINED;
    block_name(b, freed, o->name, sizeof o->name);
    mc_block_where(b->alloc_pc, at, sizeof at);
    if (freed) {
        mc_block_where(b->free_pc, fat, sizeof fat);
        snprintf(o->desc, sizeof o->desc, "a block of %lu bytes, allocated at %s, freed at %s", (unsigned long)b->size, at, fat);
    } else {
        snprintf(o->desc, sizeof o->desc, "a block of %lu bytes, allocated at %s", (unsigned long)b->size, at);
    }
    o->size = b->size;
    o->region = "heap";
    o->block = b;
    o->known = 1;
}

static int frame_object(uintptr_t g, uintptr_t addr, struct mc_object *o);

/* gcc's frame: 32-byte aligned base, shadow f1 f1 f1 f1, magic, description "N off size len name:line ...", pc */
int mc_stack_object(uintptr_t addr, struct mc_object *o)
{
    uintptr_t g = addr & ~(uintptr_t)7;
    if (&mc_fake_frame_of && (g = mc_fake_frame_of(addr)) != 0)   /* a fake frame: its base is known */
        return (*(uint64_t *)g == 0x41B58AB3 || *(uint64_t *)g == 0x45E0360E) && frame_object(g, addr, o);
    g = addr & ~(uintptr_t)7;
    for (int i = 0; i < 65536 && g >= 8; i++, g -= 8) {
        uint8_t v = *MC_SHADOW(g);
        if (v >= 0x80 && v != MC_STACK_LEFT && v != MC_STACK_MID && v != MC_STACK_RIGHT && v != MC_STACK_SCOPE) return 0;
        if (v != MC_STACK_LEFT || *MC_SHADOW(g - 8) == MC_STACK_LEFT) continue;
        if (*(uint64_t *)g != 0x41B58AB3) continue;
        return frame_object(g, addr, o);
    }
    return 0;
}

/* The variable of the frame based at g (live: magic 0x41B58AB3; a fake frame retired at its function's
 * return: 0x45E0360E, the rest kept) nearest to addr. */
static int frame_object(uintptr_t g, uintptr_t addr, struct mc_object *o)
{
    const char *d = *(const char **)(g + 8);
    const void *pc = *(const void **)(g + 16);
    char fn[1024];
    const char *line;
    mc_name_code(pc, 1, fn, sizeof fn, &line, NULL);
    char *plus = strrchr(fn, '+');
    if (plus && strcmp(plus, "+0") == 0) *plus = 0;
    long off = (long)(addr - g), best = -1, bestd = 0;
    char bname[128] = "?";
    long bstart = 0, bsize = 0;
    int nvars = (int)strtol(d, (char **)&d, 10);
    for (int k = 0; k < nvars && d; k++) {
        long vo = strtol(d, (char **)&d, 10), vs = strtol(d, (char **)&d, 10), vl = strtol(d, (char **)&d, 10);
        if (*d == ' ') d++;
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)(vl < 127 ? vl : 127), d);
        d += vl;
        long dist = off >= vo + vs ? off - (vo + vs) : off < vo ? vo - off : 0;
        if (best < 0 || dist < bestd || (dist == bestd && off >= vo + vs)) {
            best = k; bestd = dist; bstart = vo; bsize = vs;
            snprintf(bname, sizeof bname, "%s", name);
        }
    }
    if (best < 0) return 0;
    char *colon = strchr(bname, ':');
    const char *decl = colon ? colon + 1 : NULL;
    if (colon) *colon = 0;
    snprintf(o->name, sizeof o->name, "<stack:%s@%s>", bname, fn);
    if (decl) snprintf(o->desc, sizeof o->desc, "a variable of %ld bytes, declared at line %s of %s", bsize, decl, fn);
    else snprintf(o->desc, sizeof o->desc, "a variable of %ld bytes in %s's frame", bsize, fn);
    o->offset = off - bstart;
    o->size = (size_t)bsize;
    o->distance = off >= bstart + bsize ? off - (bstart + bsize) : off < bstart ? -(bstart - off) : 0;
    o->region = "stack";
    o->known = 1;
    return 1;
}

int mc_global_object(uintptr_t addr, struct mc_object *o)
{
    for (int i = 0; i < nglobals; i++) {
        const struct asan_global *g = globals[i];
        if (addr < g->beg || addr >= g->beg + g->size_with_redzone) continue;
        snprintf(o->name, sizeof o->name, "%s", g->name);
        if (strncmp(g->name, "*.LC", 4) == 0) {
            /* gcc's name of a string literal is its assembler label, which changes with -O: name it by its text */
            const char *t = (const char *)g->beg;
            size_t k = 0, i = 0;
            o->name[k++] = '"';
            for (; i < g->size && t[i] && i < 24 && k + 4 < sizeof o->name; i++)
                o->name[k++] = t[i] >= 0x20 && t[i] < 0x7f && t[i] != '"' && t[i] != '\\' ? t[i] : '?';
            if (i < g->size && t[i] && i == 24) { o->name[k++] = '.'; o->name[k++] = '.'; o->name[k++] = '.'; }
            o->name[k++] = '"';
            o->name[k] = 0;
            snprintf(o->desc, sizeof o->desc, "a string literal of %lu bytes", (unsigned long)g->size);
        } else if (g->location && g->location->file)
            snprintf(o->desc, sizeof o->desc, "a global of %lu bytes, defined at %s:%d", (unsigned long)g->size,
                     g->location->file, g->location->line);
        else
            snprintf(o->desc, sizeof o->desc, "a global of %lu bytes", (unsigned long)g->size);
        o->offset = (long)(addr - g->beg);
        o->size = g->size;
        o->distance = o->offset >= (long)g->size ? o->offset - (long)g->size : 0;
        o->region = "global";
        o->known = 1;
        return 1;
    }
    return 0;
}

/* An address in a global's redzone that is nearer the next global's start than the end of the one it follows:
 * an underflow of the next one (the redzone is both globals' neighbour). */
static int global_underflow(uintptr_t addr, struct mc_object *o)
{
    const struct asan_global *best = NULL;
    for (int i = 0; i < nglobals; i++) {
        const struct asan_global *g = globals[i];
        if (g->beg > addr && (!best || g->beg < best->beg)) best = g;
    }
    if (!best || (o->known && (long)(best->beg - addr) >= o->distance)) return 0;
    if (!mc_global_object(best->beg, o)) return 0;
    o->offset = -(long)(best->beg - addr);
    o->distance = o->offset;
    return 1;
}

/* gcc's alloca layout: a 32-byte left redzone (0xca), the object, a right redzone (0xcb) */
int mc_alloca_object(uintptr_t addr, struct mc_object *o)
{
    uintptr_t g = addr & ~(uintptr_t)7;
    uint8_t v = *MC_SHADOW(g);
    if (v == MC_ALLOCA_LEFT) {
        for (int i = 0; i < 8 && *MC_SHADOW(g) == MC_ALLOCA_LEFT; i++) g += 8;
    } else {
        for (int i = 0; i < 65536 && *MC_SHADOW(g - 8) != MC_ALLOCA_LEFT; i++) {
            uint8_t s = *MC_SHADOW(g - 8);
            if (s != 0 && s != MC_ALLOCA_RIGHT && s >= 0x80) return 0;
            g -= 8;
        }
        if (*MC_SHADOW(g - 8) != MC_ALLOCA_LEFT) return 0;
    }
    size_t size = 0;
    for (uintptr_t a = g; size < ((size_t)1 << 26); a += 8) {
        uint8_t s = *MC_SHADOW(a);
        if (s == 0) { size += 8; continue; }
        if (s < 0x80) size += s;
        break;
    }
    snprintf(o->name, sizeof o->name, "<stack:alloca>");
    snprintf(o->desc, sizeof o->desc, "an alloca of %lu bytes", (unsigned long)size);
    o->offset = (long)(addr - g);
    o->size = size;
    o->distance = o->offset >= (long)size ? o->offset - (long)size : o->offset < 0 ? o->offset : 0;
    o->region = "stack";
    o->known = 1;
    return 1;
}

void mc_classify(uintptr_t bad, struct mc_object *o)
{
    memset(o, 0, sizeof *o);
    uint8_t v = *MC_SHADOW(bad);
    if (v < 0x80) v = *MC_SHADOW((bad | 7) + 1);     /* the byte after a partial granule: its neighbour says */
    /* run --check's globals (check_symglobals.c): padding that ends in a granule the next global starts in */
    if (v < 0x80 && mc_global_object(bad, o)) v = MC_GLOBAL_RZ;
    switch (v) {
    case MC_HEAP_LEFT: case MC_HEAP_RIGHT: case MC_HEAP_FREED: {
        int inside = 0;
        struct mc_block *b = mc_block_of(bad, &inside);
        if (!b) break;
        mc_describe_block(b, o);
        uintptr_t start = (uintptr_t)(b + 1);
        o->offset = (long)(bad - start);
        if (b->magic == MC_QUARANTINED && bad >= start && bad < start + (b->size ? b->size : 1)) {
            o->kind = "use after free"; o->json_kind = "use-after-free";
        } else if (bad < start) {
            o->kind = "heap underflow"; o->json_kind = "heap-underflow"; o->distance = -(long)(start - bad);
        } else {
            o->kind = b->magic == MC_QUARANTINED ? "use after free" : "heap overflow";
            o->json_kind = b->magic == MC_QUARANTINED ? "use-after-free" : "heap-overflow";
            o->distance = (long)(bad - start - b->size);
        }
        return;
    }
    case MC_GLOBAL_RZ:
        mc_global_object(bad, o);
        if (global_underflow(bad, o)) { o->kind = "global underflow"; o->json_kind = "global-underflow"; return; }
        if (o->known) { o->kind = "global overflow"; o->json_kind = "global-overflow"; return; }
        break;
    case MC_NULL_PAGE:
        mc_null_object(bad, o);
        return;
    case MC_STACK_LEFT: case MC_STACK_MID: case MC_STACK_RIGHT: case MC_STACK_SCOPE: case MC_STACK_RETURNED:
    case MC_ALLOCA_LEFT: case MC_ALLOCA_RIGHT:
        if (v == MC_STACK_RETURNED) { o->kind = "stack use after return"; o->json_kind = "stack-use-after-return"; }
        else if (v == MC_STACK_SCOPE) { o->kind = "stack use after scope"; o->json_kind = "stack-use-after-scope"; }
        else { o->kind = "stack overflow"; o->json_kind = "stack-overflow"; }
        if ((v == MC_ALLOCA_LEFT || v == MC_ALLOCA_RIGHT) && mc_alloca_object(bad, o)) {
            if (o->distance < 0) { o->kind = "stack underflow"; o->json_kind = "stack-underflow"; }
            return;
        }
        if (mc_stack_object(bad, o)) {
            if (o->distance < 0 && v != MC_STACK_SCOPE && v != MC_STACK_RETURNED) { o->kind = "stack underflow"; o->json_kind = "stack-underflow"; }
            return;
        }
        snprintf(o->name, sizeof o->name, "<stack>");
        snprintf(o->desc, sizeof o->desc, "a redzone of a stack frame or alloca");
        o->region = "stack";
        return;
    }
    o->kind = "wild access"; o->json_kind = "wild-access";
    snprintf(o->name, sizeof o->name, "0x%lx", (unsigned long)bad);
    snprintf(o->desc, sizeof o->desc, "memory marked 0x%02x", v);
    o->region = "unknown";
}

/* an address in the first 64 KB, never mapped (mmap_min_addr): a null dereference */
void mc_null_object(uintptr_t addr, struct mc_object *o)
{
    o->kind = "null dereference"; o->json_kind = "null-dereference";
    snprintf(o->name, sizeof o->name, "NULL");
    snprintf(o->desc, sizeof o->desc, "the page at address 0, never mapped");
    o->offset = (long)addr;
    o->size = (size_t)1 << 16;
    o->region = "unknown";
    o->known = 1;
}

/* The checked object holding addr, as an access's report names it: a block's bytes, a global, a stack variable,
 * else the address in hex, "memory no checked object owns". */
void mc_object_in(uintptr_t addr, struct mc_object *o)
{
    int inside = 0;
    struct mc_block *b = mc_block_of(addr, &inside);
    if (b && inside) { mc_describe_block(b, o); o->offset = (long)(addr - (uintptr_t)(b + 1)); }
    else if (mc_global_object(addr, o) || mc_stack_object(addr, o)) {}
    else {
        snprintf(o->name, sizeof o->name, "0x%lx", (unsigned long)addr);
        snprintf(o->desc, sizeof o->desc, "memory no checked object owns");
        o->region = "unknown";
    }
}

/* any address's name: a block, a global, a stack variable, else hex */
void mc_name_any(uintptr_t addr, char *out, size_t n)
{
    struct mc_object o;
    memset(&o, 0, sizeof o);
    int inside = 0;
    struct mc_block *b = mc_block_of(addr, &inside);
    if (b) {
        block_name(b, b->magic == MC_QUARANTINED, o.name, sizeof o.name);
        o.offset = (long)(addr - (uintptr_t)(b + 1));
        o.known = 1;
    } else if (!mc_global_object(addr, &o) && !mc_stack_object(addr, &o)) {
        snprintf(out, n, "0x%lx", (unsigned long)addr);
        return;
    }
    snprintf(out, n, "%s%+ld", o.name, o.offset);
}

/* the object's address as JSON says it: "<malloc0002@bad+26>+50", or the name alone when no offset is known */
void mc_object_address(const struct mc_object *o, char *out, size_t n)
{
    if (o->known) snprintf(out, n, "%s%+ld", o->name, o->offset);
    else snprintf(out, n, "%s", o->name);
}

/* a JSON record's "address" value and its "object" up to its description: the caller adds the block's sites
 * and closes it */
void mc_put_json_object(struct mc_out *j, const struct mc_object *o)
{
    char addrname[1400];
    mc_object_address(o, addrname, sizeof addrname);
    mc_put_json(j, addrname);
    mc_put(j, ",\"object\":{\"name\":");
    mc_put_json(j, o->name);
    mc_put(j, ",\"region\":\"%s\",\"size\":%lu,\"description\":", o->region ? o->region : "unknown", (unsigned long)o->size);
    mc_put_json(j, o->desc);
}
