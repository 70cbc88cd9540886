package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfSymbol;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TracedRun;

/**
 * A program that defines functions of libzstd's names (zstd's programs/ compile lib/ in) keeps them to
 * itself: the runtime compresses with its own hidden copy of libzstd (agent/Makefile, rt_zstd_trace.c).
 * Before, the runtime linked libzstd.so, so a memtrace cc link exported the program's definitions and the
 * writer called the program's instrumented copies (zstd -19 hung, its writer waiting for a buffer inside
 * the program's ZSTD_compress2); an unmodified program exporting them (-rdynamic) under rewrite mode had
 * the same clash. Here the program's ZSTD_compress2 fails, so a writer calling it could not write a trace,
 * and each function counts its calls: the writer's would show in the printed counts (they were "3 1 9 1").
 */
class ZstdNamesTest {
    @TempDir Path dir;

    private static final String PROGRAM = """
            #include <stddef.h>
            #include <stdio.h>
            long calls[4];
            size_t ZSTD_compressBound(size_t n) { calls[0]++; return n + (n >> 7) + 1024; }
            size_t ZSTD_compress2(void *c, void *d, size_t dc, const void *s, size_t n) {
                (void)c; (void)d; (void)dc; (void)s; (void)n; calls[1]++; return (size_t)-1;
            }
            unsigned ZSTD_isError(size_t code) { calls[2]++; return code > (size_t)-120; }
            unsigned long long ZSTD_trace_compress_begin(const void *cctx) { (void)cctx; calls[3]++; return 1; }
            int main(int argc, char **argv) {
                (void)argv;
                size_t bound = ZSTD_compressBound((size_t)argc * 128);
                unsigned bad = ZSTD_isError(ZSTD_compress2(NULL, NULL, 0, NULL, 0));
                unsigned long long t = ZSTD_trace_compress_begin(NULL);
                printf("%zu %u %llu: %ld %ld %ld %ld\\n", bound, bad, t, calls[0], calls[1], calls[2], calls[3]);
                return 0;
            }
            """;

    private static final String OUTPUT = "1153 1 1: 1 1 1 1\n";

    /** Each function's load and store of its counter, then main's four loads for printf: nothing else. */
    private static final List<String> COUNTER_ACCESSES = List.of(
            "L calls[0] ZSTD_compressBound", "S calls[0] ZSTD_compressBound",
            "L calls[1] ZSTD_compress2", "S calls[1] ZSTD_compress2",
            "L calls[2] ZSTD_isError", "S calls[2] ZSTD_isError",
            "L calls[3] ZSTD_trace_compress_begin", "S calls[3] ZSTD_trace_compress_begin",
            "L calls[3] main", "L calls[2] main", "L calls[1] main", "L calls[0] main");

    @Test
    void aCcBuiltProgramKeepsItsFunctionsOfLibzstdsNamesToItself() throws Exception {
        Files.writeString(dir.resolve("own.c"), PROGRAM);
        var cc = Cli.run(dir, "cc", "-O0", "-g", "-o", dir.resolve("own").toString(), dir.resolve("own.c").toString());
        assertThat(cc.status()).as(cc.stderr()).isZero();
        assertThat(zstdNames(dir.resolve("own"))).as("the executable exports none of libzstd's names").isEmpty();

        TracedRun run = TracedRun.run(dir, List.of(dir.resolve("own").toString()), dir.resolve("own.mtr"), 16);
        assertThat(run.status()).as("exit status").isZero();
        assertThat(run.stdout()).as("main's calls, none of the writer's").isEqualTo(OUTPUT);
        var printed = Cli.run(dir, "print", "-o", "own.trace", "own.mtr");
        assertThat(printed.status()).as(printed.stderr()).isZero();
        assertThat(counterAccesses(dir.resolve("own.trace"))).isEqualTo(COUNTER_ACCESSES);
    }

    @Test
    void anUnmodifiedProgramExportingThemIsRewrittenAndTracedAsWell() throws Exception {
        Files.writeString(dir.resolve("own.c"), PROGRAM);
        Path prog = Gcc.compile(dir, "own.c", "own", "-g", "-rdynamic");
        assertThat(zstdNames(prog)).as("-rdynamic exports them").hasSize(4);
        var r = Cli.run(dir, "run", "--mode", "rewrite", "-o", "own.trace", "--", prog.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo(OUTPUT);
        assertThat(counterAccesses(dir.resolve("own.trace"))).isEqualTo(COUNTER_ACCESSES);
    }

    @Test
    void theRuntimeNeitherDefinesNorNeedsAnyOfLibzstdsNames() throws Exception {
        Path runtime = Path.of("target/classes/org/memtrace/launch/libmemtrace-rt.so");
        assertThat(zstdNames(runtime)).isEmpty();
    }

    private static List<String> zstdNames(Path elf) throws Exception {
        return ElfFile.read(elf).dynsym().stream().map(ElfSymbol::name)
                .filter(n -> n.startsWith("ZSTD_") || n.startsWith("ZDICT_") || n.startsWith("HUF_") || n.startsWith("FSE_"))
                .toList();
    }

    /** "L calls[i] function" for each access to the counters, in trace order. */
    private static List<String> counterAccesses(Path trace) throws Exception {
        List<String> accesses = new ArrayList<>();
        for (String l : Files.readAllLines(trace)) {
            if (!(l.startsWith("L$") || l.startsWith("S$"))) continue;
            String[] f = l.split(",");
            int colon = f[0].indexOf(':');
            if (colon < 0 || !f[0].substring(colon + 1).startsWith("calls[")) continue;
            accesses.add(l.charAt(0) + " " + f[0].substring(colon + 1).replaceAll("\\+0$", "") + " " + f[2].replaceAll("\\+\\d+$", ""));
        }
        return accesses;
    }
}
