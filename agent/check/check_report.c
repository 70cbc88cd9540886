/*
 * check_report.c: the checker's reports of bad accesses (check_report.h lists the files that make the
 * reports, and check_misuse.c those of misused calls): an access the shadow refused (a check of gcc's
 * instrumentation, a loop's or a libc function's range), one past an extent the caller knows (run --check's
 * globals and frames of an unmodified binary), one that left its block for another object (Spindle's
 * object-level check), a fault no check foresaw and a return through a smashed return address. Each is
 * worded from the object the address is (check_objects.c), under mc_report_lock.
 *
 * Output: one line for people on stderr per error, e.g.
 *   memtrace: heap overflow: <malloc0002@bad+26>+50 (a block of 50 bytes, allocated at x.c:28) written 1 byte,
 *   0 bytes past its end, at x.c:39 (bad+115), thread 8104
 * then the frames (check_stacks.c), and, with MEMTRACE_CHECK_JSON=FILE, the same facts as one JSON object a
 * line (docs/check.md has both grammars); MEMTRACE_CHECK_SARIF=FILE, a SARIF result (check_sarif.c).
 *
 * What it gets wrong: an overflow that lands inside another valid object is seen only when a loop check's
 * object-level test finds it (mc_report_into; check_shadow.c's mc_escapes) or an indexed access 96 bytes or
 * more from its base is looked up (__memtrace_check_index), never for other single accesses; a loop's range is
 * named by its first bad byte's object, also where the range runs on into the next one.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "check_report.h"

pthread_mutex_t mc_report_lock = PTHREAD_MUTEX_INITIALIZER;

static void report_access(uintptr_t addr, size_t size, enum mc_access access, const void *pc, const char *by,
                          uintptr_t span_lo, uintptr_t span_hi);

void mc_report_access(uintptr_t addr, size_t size, enum mc_access access, const void *pc, const char *by)
{
    report_access(addr, size, access, pc, by, 0, 0);
}

/* A loop check: [span_lo, span_hi) is the part of the loop's range that may not be touched, named as a range
 * when it holds more than one access: "+50..+99 (...) written 1 byte at a time by the loop, 0..49 bytes past its end". */
void mc_report_loop(uintptr_t bad, size_t size, enum mc_access access, const void *pc, uintptr_t span_lo, uintptr_t span_hi)
{
    report_access(bad, size, access, pc, "the loop", span_hi - span_lo > size ? span_lo : 0, span_hi - span_lo > size ? span_hi : 0);
}

static void emit_access(const struct mc_object *op, uintptr_t bad, size_t size, enum mc_access access, const void *pc,
                        const char *by, uintptr_t span_lo, uintptr_t span_hi);

static void report_access(uintptr_t addr, size_t size, enum mc_access access, const void *pc, const char *by,
                          uintptr_t span_lo, uintptr_t span_hi)
{
    uintptr_t bad = mc_first_bad(addr, size ? size : 1);
    if (!bad) bad = addr;
    struct mc_object o;
    pthread_mutex_lock(&mc_report_lock);
    mc_classify(bad, &o);
    if (mc_said_before(o.kind, pc)) { pthread_mutex_unlock(&mc_report_lock); return; }
    emit_access(&o, bad, size, access, pc, by, span_lo, span_hi);
    pthread_mutex_unlock(&mc_report_lock);
    mc_finish_error();
}

/* A SIGSEGV or SIGBUS no check foresaw, which is about to kill the program (it has no handler of its own):
 * memtrace run --check's word for what ASan calls "SEGV on unknown address". An address in the first 64 KB is
 * a null dereference, worded as a check's; any other a wild access, with why the kernel refused it (`why`,
 * e.g. "unmapped memory"). size 0: not known (then "read"/"written" alone); known 0: the address is not known
 * either (a general protection fault carries none). Does not stop the program: the caller lets the signal kill
 * it, as it would natively, after this line (and the summary, when asked). */
void mc_report_segv(uintptr_t addr, int known, size_t size, enum mc_access access, const void *pc, const char *why)
{
    struct mc_object o;
    memset(&o, 0, sizeof o);
    pthread_mutex_lock(&mc_report_lock);
    if (!known) {
        o.kind = "wild access"; o.json_kind = "wild-access";
        snprintf(o.name, sizeof o.name, "<unknown address>");
        snprintf(o.desc, sizeof o.desc, "SEGV on unknown address: %s", why);
    } else if (addr < ((uintptr_t)1 << 16)) {
        mc_null_object(addr, &o);
    } else {
        o.kind = "wild access"; o.json_kind = "wild-access";
        snprintf(o.name, sizeof o.name, "0x%lx", (unsigned long)addr);
        snprintf(o.desc, sizeof o.desc, "SEGV on unknown address: %s", why);
    }
    o.region = "unknown";
    emit_access(&o, addr, size, access, pc, NULL, 0, 0);
    mc_count_dying_error();
    pthread_mutex_unlock(&mc_report_lock);
    fflush(NULL);
}

/* An access that leaves the object its address came from, when the caller knows the object's extent rather
 * than a shadow marks it: memtrace run --check's globals of an unmodified binary (their symbols' st_size, no
 * redzones: check_globals.c) and its stack frames. Worded as the shadow's reports are: "global overflow: g+40
 * (a global of 40 bytes) written 4 bytes, 0 bytes past its end, at ..."; underflows with a negative offset. */
void mc_report_extent(uintptr_t addr, size_t size, enum mc_access access, const void *pc, const char *by,
                      const struct mc_extent *x)
{
    struct mc_object o;
    memset(&o, 0, sizeof o);
    uintptr_t end = x->beg + x->size, bad = addr >= x->beg && addr < end ? end : addr;
    int stack = strcmp(x->region, "stack") == 0;
    if (bad < x->beg) {
        o.kind = stack ? "stack underflow" : "global underflow";
        o.json_kind = stack ? "stack-underflow" : "global-underflow";
        o.distance = -(long)(x->beg - bad);
    } else {
        o.kind = stack ? "stack overflow" : "global overflow";
        o.json_kind = stack ? "stack-overflow" : "global-overflow";
        o.distance = (long)(bad - end);
    }
    o.offset = (long)(bad - x->beg);
    o.size = x->size;
    o.region = x->region;
    o.known = 1;
    snprintf(o.name, sizeof o.name, "%s", x->name);
    snprintf(o.desc, sizeof o.desc, "%s", x->desc);
    pthread_mutex_lock(&mc_report_lock);
    if (mc_said_before(o.kind, pc)) { pthread_mutex_unlock(&mc_report_lock); return; }
    emit_access(&o, bad, size, access, pc, by, 0, 0);
    pthread_mutex_unlock(&mc_report_lock);
    mc_finish_error();
}

/* A return through a return address an overflow overwrote (memtrace run --check, where no redzone showed the
 * overflow when it happened): said when the ret faults, as a stack overflow of the frame of fn (the function
 * whose ret it is, NULL when not known: the fault came at the address returned to). pc: the ret, or NULL. Like
 * mc_report_segv, does not stop the program, which dies of the signal after this line. */
void mc_report_smash(uintptr_t slot, uintptr_t target, const void *pc, const char *fn)
{
    struct mc_object o;
    memset(&o, 0, sizeof o);
    pthread_mutex_lock(&mc_report_lock);
    o.kind = "stack overflow"; o.json_kind = "stack-overflow";
    if (fn) {
        snprintf(o.name, sizeof o.name, "<stack:return address@%s>", mc_spell(fn));
        snprintf(o.desc, sizeof o.desc, "the return address in %s's frame, overwritten with 0x%lx: a stack smash, "
                 "found at its return", mc_spell(fn), (unsigned long)target);
    } else {
        snprintf(o.name, sizeof o.name, "<stack:return address>");
        snprintf(o.desc, sizeof o.desc, "a frame's return address, overwritten with 0x%lx: a stack smash, found "
                 "when the return reached it", (unsigned long)target);
    }
    o.size = 8;
    o.region = "stack";
    emit_access(&o, slot, 8, MC_READ, pc ? pc : (const void *)target, NULL, 0, 0);
    mc_count_dying_error();
    pthread_mutex_unlock(&mc_report_lock);
    fflush(NULL);
}

static void emit_access(const struct mc_object *op, uintptr_t bad, size_t size, enum mc_access access, const void *pc,
                        const char *by, uintptr_t span_lo, uintptr_t span_hi)
{
    struct mc_object o = *op;
    char code[1024], lbuf[8192], jbuf[8192], sline[MC_LINE_MAX];
    const char *line;
    mc_name_code(pc, mc_site_ret(), code, sizeof code, &line, sline);
    struct mc_out l = {lbuf, sizeof lbuf, 0}, j = {jbuf, sizeof jbuf, 0};
    const char *verb = access == MC_WRITE ? "written" : "read";
    mc_put(&l, "memtrace: %s: %s", o.kind, o.name);
    long first = o.offset + (long)(span_lo - bad), last = o.offset + (long)(span_hi - 1 - bad);
    if (o.known && span_hi) mc_put(&l, "%+ld..%+ld", first, last);
    else if (o.known) mc_put(&l, "%+ld", o.offset);
    if (size) mc_put(&l, " (%s) %s %lu byte%s%s", o.desc, verb, (unsigned long)size, mc_plural(size), span_hi ? " at a time" : "");
    else mc_put(&l, " (%s) %s", o.desc, verb);
    if (by) mc_put(&l, " by %s", by);
    if (o.known && span_hi && last < 0) mc_put(&l, ", %ld..%ld bytes before its start", -last, -first);
    else if (o.known && span_hi && first >= (long)o.size) mc_put(&l, ", %ld..%ld bytes past its end", first - (long)o.size, last - (long)o.size);
    else if (o.known && o.distance < 0) mc_put(&l, ", %ld byte%s before its start", -o.distance, mc_plural((size_t)-o.distance));
    else if (o.known && o.offset >= (long)o.size) mc_put(&l, ", %ld byte%s past its end", o.distance, mc_plural((size_t)o.distance));
    if (o.into) mc_put(&l, ", inside %s", o.into);
    mc_put_at(&l, code, line);
    mc_put(&j, "{\"kind\":\"%s\",\"access\":\"%s\",\"size\":%lu,\"address\":", o.json_kind, access == MC_WRITE ? "write" : "read",
        (unsigned long)size);
    mc_put_json_object(&j, &o);
    struct mc_block_sites s = {.allocated = {.code = NULL}, .freed = {.code = NULL}};
    if (o.block) {
        mc_name_block_sites(o.block, &s);
        mc_put_json_site(&j, "allocated", s.allocated.code, s.allocated.line, MC_ALLOC_FRAMES);
        if (s.freed.code) mc_put_json_site(&j, "freed", s.freed.code, s.freed.line, MC_FREE_FRAMES);
    }
    mc_put(&j, "},\"offset\":%ld,\"distance\":%ld,", o.offset, o.distance);
    if (o.into) {
        mc_put(&j, "\"into\":");
        mc_put_json(&j, o.into);
        mc_put(&j, ",");
    }
    mc_put(&j, "\"by\":");
    mc_put_json(&j, by);
    mc_put_json_site(&j, "at", code, line, MC_NO_FRAMES);
    mc_put(&j, ",\"thread\":%d", gettid());
    mc_name_frames(pc);
    mc_put_json_frames(&j);
    mc_sarif_result(o.json_kind, l.buf, (struct mc_site_ref){.code = code, .line = line}, s.allocated, s.freed);
    mc_put_frames(&l);
    mc_emit(&l, &j);
}

/* Spindle's object-level check failed: an access at addr, whose bytes are all addressable, left the live block
 * b its pointer came from and landed in another object, which no redzone shows. Worded as a heap overflow of
 * b, then ", inside" the object hit: "heap overflow: <malloc0001@run+20>+256 (a block of 16 bytes, ...)
 * written 4 bytes by the loop, 240 bytes past its end, inside <malloc0002@run+31>+144 (a block of ...)". */
void mc_report_into(const struct mc_block *b, uintptr_t addr, size_t size, enum mc_access access, const void *pc, const char *by)
{
    struct mc_object o, t;
    memset(&o, 0, sizeof o);
    memset(&t, 0, sizeof t);
    pthread_mutex_lock(&mc_report_lock);
    mc_describe_block(b, &o);
    uintptr_t start = (uintptr_t)(b + 1);
    o.offset = (long)(addr - start);
    if (addr < start) {
        o.kind = "heap underflow"; o.json_kind = "heap-underflow"; o.distance = -(long)(start - addr);
    } else {
        o.kind = "heap overflow"; o.json_kind = "heap-overflow"; o.distance = (long)(addr - start - b->size);
    }
    if (mc_said_before(o.kind, pc)) { pthread_mutex_unlock(&mc_report_lock); return; }
    mc_object_in(addr, &t);
    static char into[sizeof t.name + sizeof t.desc + 32];
    if (t.known) snprintf(into, sizeof into, "%s%+ld (%s)", t.name, t.offset, t.desc);
    else snprintf(into, sizeof into, "%s (%s)", t.name, t.desc);
    o.into = into;
    emit_access(&o, addr, size, access, pc, by, 0, 0);
    pthread_mutex_unlock(&mc_report_lock);
    mc_finish_error();
}

