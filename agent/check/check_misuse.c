/*
 * check_misuse.c: the checker's reports of library calls misused (check_report.h lists the files that make
 * the reports; check_report.c has those of bad accesses): a free, delete or realloc of a block freed already,
 * of a pointer no allocation returned or of one from another allocator family; a write that _FORTIFY_SOURCE
 * knew to be a struct member's and that runs past it into the rest of its object; a copy between overlapping
 * ranges. Each is one line on stderr, its frames, and a JSON record and SARIF result, as an access's is:
 *   memtrace: double free: free of <freed:0002@bad+26>+0 (a block of 50 bytes, allocated at x.c:28, freed at
 *   x.c:30), at x.c:31 (bad+90), thread 8104
 *   memtrace: intra-object overflow: <malloc0001@main+20>+8 (a block of 24 bytes, ...) written 20 bytes by
 *   strcpy into a field of 16 bytes, 4 bytes past the field's end, at x.c:12 (main+60), thread 8104
 *   memtrace: overlapping copy: memcpy of 8 bytes from <malloc0001@main+20>+4 to <malloc0001@main+20>+0, at ...
 *
 * What it gets wrong: a pointer that is in no block, global or frame gcc laid out is named by dladdr or as
 * "memory on the stack" when it lies above the runtime's frame (64 MB at most), else by its hex value; the
 * intra-object report knows only the field's size gcc gave the _chk function, not the field's name.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "check_report.h"

const char *mc_family_name(int f);   /* check_heap.c, check_run.c: "malloc", "new", "new[]" */

/* free, delete, realloc of something that is not a live block of theirs: kind "double free", "invalid free" or
 * "allocator mismatch" (the block's family then said), what the function's name */
void mc_report_free(const char *kind, uintptr_t ptr, const struct mc_block *b, const void *pc, const char *what)
{
    pthread_mutex_lock(&mc_report_lock);
    if (mc_said_before(kind, pc)) { pthread_mutex_unlock(&mc_report_lock); return; }
    struct mc_object o;
    memset(&o, 0, sizeof o);
    if (b) {
        mc_describe_block(b, &o);
        o.offset = 0;
    } else {
        /* what the pointer is: inside a block, a global, a stack variable, or nothing known */
        mc_classify(ptr, &o);
        if (!o.known) {
            int inside = 0;
            struct mc_block *in = mc_block_of(ptr, &inside);
            if (in) { mc_describe_block(in, &o); o.offset = (long)(ptr - (uintptr_t)(in + 1)); }
            else if (mc_global_object(ptr, &o) || mc_stack_object(ptr, &o)) {}
            else if (*MC_SHADOW(ptr - 8) == MC_ALLOCA_LEFT && mc_alloca_object(ptr, &o)) {}
            else if (ptr > (uintptr_t)__builtin_frame_address(0) && ptr - (uintptr_t)__builtin_frame_address(0) < (64u << 20)) {
                snprintf(o.name, sizeof o.name, "<stack>");
                snprintf(o.desc, sizeof o.desc, "memory on the stack of thread %d", gettid());
                o.offset = 0;
                o.region = "stack";
            } else {
                snprintf(o.name, sizeof o.name, "0x%lx", (unsigned long)ptr);
                Dl_info info;
                if (dladdr((void *)ptr, &info) && info.dli_sname && info.dli_saddr) {
                    snprintf(o.name, sizeof o.name, "%s", mc_spell(info.dli_sname));
                    o.offset = (long)(ptr - (uintptr_t)info.dli_saddr);
                    o.known = 1;
                    snprintf(o.desc, sizeof o.desc, "static memory");
                    o.region = "global";
                } else {
                    snprintf(o.desc, sizeof o.desc, "not memory this allocator gave out");
                    o.region = "unknown";
                }
            }
        }
    }
    const char *jkind = kind[0] == 'd' ? "double-free" : kind[0] == 'i' ? "invalid-free" : "allocator-mismatch";
    char code[1024], lbuf[8192], jbuf[8192], sline[MC_LINE_MAX];
    const char *line;
    mc_name_code(pc, mc_site_ret(), code, sizeof code, &line, sline);
    struct mc_out l = {lbuf, sizeof lbuf, 0}, j = {jbuf, sizeof jbuf, 0};
    mc_put(&l, "memtrace: %s: %s of %s", kind, what, o.name);
    if (o.known) mc_put(&l, "%+ld", o.offset);
    mc_put(&l, " (%s", o.desc);
    if (b && kind[0] == 'a') mc_put(&l, ", from %s", mc_family_name(b->family));
    mc_put(&l, ")");
    mc_put_at(&l, code, line);
    mc_put(&j, "{\"kind\":\"%s\",\"by\":\"%s\",\"address\":", jkind, what);
    mc_put_json_object(&j, &o);
    mc_put(&j, "}");
    mc_put_json_site(&j, "at", code, line, MC_NO_FRAMES);
    mc_put(&j, ",\"thread\":%d", gettid());
    struct mc_block_sites s = {.allocated = {.code = NULL}, .freed = {.code = NULL}};
    if (o.block) mc_name_block_sites(o.block, &s);
    mc_name_frames(pc);
    mc_put_json_frames(&j);
    mc_sarif_result(jkind, l.buf, (struct mc_site_ref){.code = code, .line = line}, s.allocated, s.freed);
    mc_put_frames(&l);
    mc_emit(&l, &j);
    pthread_mutex_unlock(&mc_report_lock);
    mc_finish_error();
}

/* An intra-object overflow: n bytes written at d, which is addressable, where gcc's _FORTIFY_SOURCE knew the
 * destination (a struct member, by __builtin_object_size type 1) to have only field bytes. The object is the
 * block, global or stack variable d is in. */
void mc_report_field(uintptr_t d, size_t n, size_t field, const void *pc, const char *by)
{
    pthread_mutex_lock(&mc_report_lock);
    if (mc_said_before("intra-object overflow", pc)) { pthread_mutex_unlock(&mc_report_lock); return; }
    struct mc_object o;
    memset(&o, 0, sizeof o);
    mc_object_in(d, &o);
    char code[1024], lbuf[8192], jbuf[8192], addrname[1400], sline[MC_LINE_MAX];
    const char *line;
    mc_name_code(pc, mc_site_ret(), code, sizeof code, &line, sline);
    mc_object_address(&o, addrname, sizeof addrname);
    struct mc_out l = {lbuf, sizeof lbuf, 0}, j = {jbuf, sizeof jbuf, 0};
    mc_put(&l, "memtrace: intra-object overflow: %s (%s) written %lu byte%s by %s into a field of %lu byte%s, %lu byte%s past the "
            "field's end", addrname, o.desc, (unsigned long)n, mc_plural(n), by, (unsigned long)field, mc_plural(field),
        (unsigned long)(n - field), mc_plural(n - field));
    mc_put_at(&l, code, line);
    mc_put(&j, "{\"kind\":\"intra-object-overflow\",\"access\":\"write\",\"size\":%lu,\"field\":%lu,\"address\":",
        (unsigned long)n, (unsigned long)field);
    mc_put_json_object(&j, &o);
    char a[1024], aline[MC_LINE_MAX];
    struct mc_site_ref allocated = {.code = NULL}, none = {.code = NULL};
    if (o.block) {
        mc_block_site(o.block->alloc_pc, a, sizeof a, &allocated.line, aline);
        allocated.code = a;
        mc_put_json_site(&j, "allocated", a, allocated.line, MC_NO_FRAMES);
    }
    mc_put(&j, "},\"offset\":%ld,\"distance\":%lu,\"by\":", o.offset, (unsigned long)(n - field));
    mc_put_json(&j, by);
    mc_put_json_site(&j, "at", code, line, MC_NO_FRAMES);
    mc_put(&j, ",\"thread\":%d", gettid());
    mc_sarif_result("intra-object-overflow", l.buf, (struct mc_site_ref){.code = code, .line = line}, allocated, none);
    mc_emit(&l, &j);
    pthread_mutex_unlock(&mc_report_lock);
    mc_finish_error();
}

/* memcpy and the like given overlapping ranges: both named as any address is */
void mc_report_overlap(uintptr_t dst, uintptr_t src, size_t size, const void *pc, const char *fn)
{
    pthread_mutex_lock(&mc_report_lock);
    if (mc_said_before("overlap", pc)) { pthread_mutex_unlock(&mc_report_lock); return; }
    char d[1400], s[1400], code[1024], lbuf[8192], jbuf[8192], sline[MC_LINE_MAX];
    const char *line;
    mc_name_any(dst, d, sizeof d);
    mc_name_any(src, s, sizeof s);
    mc_name_code(pc, mc_site_ret(), code, sizeof code, &line, sline);
    struct mc_out l = {lbuf, sizeof lbuf, 0}, j = {jbuf, sizeof jbuf, 0};
    mc_put(&l, "memtrace: overlapping copy: %s of %lu byte%s from %s to %s", fn, (unsigned long)size, mc_plural(size), s, d);
    mc_put_at(&l, code, line);
    mc_put(&j, "{\"kind\":\"overlap\",\"by\":\"%s\",\"size\":%lu,\"source\":", fn, (unsigned long)size);
    mc_put_json(&j, s);
    mc_put(&j, ",\"destination\":");
    mc_put_json(&j, d);
    mc_put_json_site(&j, "at", code, line, MC_NO_FRAMES);
    mc_put(&j, ",\"thread\":%d", gettid());
    struct mc_site_ref none = {.code = NULL};
    mc_sarif_result("overlap", l.buf, (struct mc_site_ref){.code = code, .line = line}, none, none);
    mc_emit(&l, &j);
    pthread_mutex_unlock(&mc_report_lock);
    mc_finish_error();
}
