/*
 * rt_zstd_trace.c: libzstd's tracing hooks, answered inside the runtime. The runtime links libzstd's static
 * archive with every name of it hidden (Makefile: --exclude-libs), so the writer's compression calls its own
 * copy whatever the program defines. libzstd asks two names it does not define, weakly, whether anyone
 * traces it (ZSTD_trace_compress_begin, _end; zstd's lib/common/zstd_trace.h): left undefined they would
 * stay dynamic and bind to the program's, and zstd's own command line defines them (programs/
 * zstdcli_trace.c), so the writer would run the program's instrumented code. Defined here, hidden, they
 * bind at link time: begin says "not traced" (0), and libzstd then never calls end.
 *
 * How it reads: nothing is printed or recorded. What it gets wrong: nothing traces the runtime's zstd.
 */
#include <stddef.h>

struct ZSTD_CCtx_s;
struct ZSTD_Trace;

/* The header (zstd_trace.h) is not installed; its types are these. */
typedef unsigned long long ZSTD_TraceCtx;

ZSTD_TraceCtx ZSTD_trace_compress_begin(const struct ZSTD_CCtx_s *cctx);
void ZSTD_trace_compress_end(ZSTD_TraceCtx ctx, const struct ZSTD_Trace *trace);

ZSTD_TraceCtx ZSTD_trace_compress_begin(const struct ZSTD_CCtx_s *cctx)
{
    (void)cctx;
    return 0;
}

void ZSTD_trace_compress_end(ZSTD_TraceCtx ctx, const struct ZSTD_Trace *trace)
{
    (void)ctx;
    (void)trace;
}
