package org.memtrace.cli;

import static org.assertj.core.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.stream.LongStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TraceFile;
import org.memtrace.testutil.TraceFile.Line;

/**
 * Both native libraries built with -DMT_DEBUG (agent/Makefile; the invariants their headers promise are
 * asserted, agent/common/mt_common.h), installed as a memtrace installation's library directory
 * (-Dmemtrace.lib) so that {@code memtrace run} preloads the debug agent and {@code memtrace cc} links the
 * debug runtime: small programs record exactly what they record under the product's build, with no
 * assertion firing; and an invariant broken on purpose (memtrace_debug_break, exported by debug builds
 * only) ends the program with SIGABRT and one line naming it.
 */
class DebugBuildTest {
    /** Where the Maven build's `make -C agent OUT=…` put the product's native files. */
    private static final Path PRODUCT = Path.of("target/classes/org/memtrace/launch").toAbsolutePath();

    @TempDir static Path dir;
    static Path lib;
    static List<String> debugLib;

    @BeforeAll
    static void build() throws Exception {
        lib = dir.resolve("lib");
        Files.createDirectory(lib);
        Gcc.run(List.of("make", "-s", "-C", Path.of("agent").toAbsolutePath().toString(), "OUT=" + lib, "CFLAGS=-O1 -g -DMT_DEBUG",
                lib + "/libmemtrace-agent.so", lib + "/libmemtrace-rt.so"));
        // as make install lays the installation out: the wrapper runs (0755), nothing writable by others
        Path wrapper = Files.copy(PRODUCT.resolve("memtrace-cc-wrapper"), lib.resolve("memtrace-cc-wrapper"));
        Files.setPosixFilePermissions(wrapper, PosixFilePermissions.fromString("rwxr-xr-x"));
        debugLib = List.of("-Dmemtrace.lib=" + lib);
        for (String p : List.of("global_array", "heap_block", "debug_break"))
            Gcc.compile(dir, p + ".c", p, "-g", "-no-pie");
        Gcc.compile(dir, "threads.c", "threads", "-g", "-no-pie", "-pthread");
        for (String p : List.of("heap_block", "cachewalk", "debug_break")) {
            Path src = dir.resolve(p + ".c");
            if (!Files.exists(src)) Files.copy(DebugBuildTest.class.getResourceAsStream("/c/" + p + ".c"), src);
            var r = Cli.runWith(dir, debugLib, "cc", "-O0", "-g", "-no-pie", "-pthread", "-o", dir.resolve(p + "-cc").toString(), src.toString());
            assertThat(r.status()).as(r.stderr()).isZero();
        }
    }

    private static Cli.Result memtrace(String... args) throws Exception {
        return Cli.runWith(dir, debugLib, args);
    }

    private static Cli.Result record(String trace, String... program) throws Exception {
        String[] all = new String[program.length + 8];
        System.arraycopy(new String[] {"run", "--mode", "fault", "--addresses", "raw", "-o", dir.resolve(trace).toString(), "--"}, 0, all, 0, 8);
        System.arraycopy(program, 0, all, 8, program.length);
        return memtrace(all);
    }

    private static long symbol(String program, String name) throws Exception {
        return Gcc.run(List.of("nm", dir.resolve(program).toString())).lines().map(l -> l.split(" "))
                .filter(f -> f.length == 3 && f[2].equals(name)).mapToLong(f -> Long.parseUnsignedLong(f[0], 16)).findFirst().orElseThrow();
    }

    private static List<Long> in(List<Line> accesses, long start, long bytes) {
        return accesses.stream().map(l -> l.number(0)).filter(a -> a >= start && a < start + bytes).toList();
    }

    private static List<Long> every(long start, int n, int step) {
        return LongStream.range(0, n).map(i -> start + step * i).boxed().toList();
    }

    @Test
    void theDebugLibrariesAreTheOnesUsedAndTheProductHasNoBreakHook() throws Exception {
        String product = Gcc.run(List.of("nm", "-D", "--defined-only", PRODUCT.resolve("libmemtrace-agent.so").toString(),
                PRODUCT.resolve("libmemtrace-rt.so").toString()));
        assertThat(product).doesNotContain("memtrace_debug_break");
        for (String l : List.of("libmemtrace-agent.so", "libmemtrace-rt.so"))
            assertThat(Gcc.run(List.of("nm", "-D", "--defined-only", lib.resolve(l).toString()))).contains(" T memtrace_debug_break");
        assertThat(Gcc.run(List.of("readelf", "-d", dir.resolve("heap_block-cc").toString()))).contains(lib.toString());
        // under the product's agent the fixture finds no hook and says so
        Path err = dir.resolve("product.err");
        var r = Cli.run(dir, "run", "--mode", "fault", "-o", dir.resolve("product.trace").toString(), "--", dir.resolve("debug_break").toString(), "ranges", err.toString());
        assertThat(r.status()).as(r.stderr()).isEqualTo(77);
        assertThat(Files.readString(err)).isEqualTo("no memtrace_debug_break\n");
    }

    @Test
    void faultModeRecordsAGlobalArrayAHeapBlockAndThreadsWithNoInvariantBroken() throws Exception {
        var array = record("array.trace", dir.resolve("global_array").toString());
        assertThat(array.status()).as(array.stderr()).isZero();
        long table = symbol("global_array", "table");
        assertThat(in(TraceFile.read(dir.resolve("array.trace")).of('S'), table, 400)).isEqualTo(every(table, 100, 4));

        var heap = record("heap.trace", dir.resolve("heap_block").toString());
        assertThat(heap.status()).as(heap.stderr()).isEqualTo(7);
        TraceFile t = TraceFile.read(dir.resolve("heap.trace"));
        long block = t.of('M').stream().filter(l -> l.field(1).equals("64")).findFirst().orElseThrow().number(0);
        assertThat(in(t.of('S'), block, 64)).isEqualTo(every(block, 16, 4));

        var threads = record("threads.trace", dir.resolve("threads").toString());
        assertThat(threads.status()).as(threads.stderr()).isZero();
        for (var r : List.of(array, heap, threads)) assertThat(r.stderr()).doesNotContain("invariant broken");
    }

    @Test
    void compiledInRecordsEveryAccessOverManySmallBuffersWithNoInvariantBroken() throws Exception {
        var heap = record("heap-cc.trace", dir.resolve("heap_block-cc").toString());
        assertThat(heap.status()).as(heap.stderr()).isEqualTo(7);
        TraceFile t = TraceFile.read(dir.resolve("heap-cc.trace"));
        long block = t.of('M').stream().filter(l -> l.field(1).equals("64")).findFirst().orElseThrow().number(0);
        assertThat(in(t.of('S'), block, 64)).isEqualTo(every(block, 16, 4));

        // 8 KiB buffers: the 1,024 loads of the table alone fill several, each checked as it is queued and
        // each chunk header before it is written
        Path mtr = dir.resolve("cachewalk.mtr");
        String out = Gcc.run(List.of(dir.resolve("cachewalk-cc").toString()), Map.of("MEMTRACE_OUT", mtr.toString(), "MEMTRACE_BUFFER_KB", "8"));
        assertThat(out).doesNotContain("invariant broken");
        var print = memtrace("print", "--addresses", "raw", "-o", dir.resolve("cachewalk.trace").toString(), mtr.toString());
        assertThat(print.status()).as(print.stderr()).isZero();
        TraceFile c = TraceFile.read(dir.resolve("cachewalk.trace"));
        long table = symbol("cachewalk-cc", "table"), other = symbol("cachewalk-cc", "other");
        assertThat(in(c.of('L'), table, 4096)).isEqualTo(every(table, 1024, 4));
        assertThat(in(c.of('S'), other, 2048)).isEqualTo(every(other, 512, 4));
    }

    @Test
    void aBrokenTracedSetAbortsTheFaultModeRunWithOneLineNamingIt() throws Exception {
        Path err = dir.resolve("ranges.err");
        var none = record("none.trace", dir.resolve("debug_break").toString(), "none", dir.resolve("none.err").toString());
        assertThat(none.status()).as(none.stderr()).isZero();
        assertThat(none.stdout()).isEqualTo("survived 1023\n"); // -o: the program's standard output is its own
        var r = record("ranges.trace", dir.resolve("debug_break").toString(), "ranges", err.toString());
        assertThat(r.status()).as(r.stderr()).isEqualTo(128 + 6);
        assertThat(Files.readString(err)).matches("memtrace: invariant broken at traced\\.c:\\d+: "
                + "the traced set is sorted and disjoint, in pages \\(i == 0 \\|\\| last <= w\\[0\\]\\)\n");
    }

    @Test
    void aBrokenBufferAbortsTheCompiledInRunWithOneLineNamingIt() throws Exception {
        Path prog = dir.resolve("debug_break-cc");
        Path none = dir.resolve("none-cc.err"), err = dir.resolve("buffer-cc.err");
        ProcessBuilder ok = new ProcessBuilder(prog.toString(), "none", none.toString()).redirectOutput(ProcessBuilder.Redirect.DISCARD);
        ok.environment().put("MEMTRACE_OUT", dir.resolve("none.mtr").toString());
        assertThat(ok.start().waitFor()).isZero();
        assertThat(Files.readString(none)).isEmpty();
        ProcessBuilder broken = new ProcessBuilder(prog.toString(), "buffer", err.toString()).redirectOutput(ProcessBuilder.Redirect.DISCARD);
        broken.environment().put("MEMTRACE_OUT", dir.resolve("buffer.mtr").toString());
        assertThat(broken.start().waitFor()).isEqualTo(128 + 6);
        assertThat(Files.readString(err)).matches("memtrace: invariant broken at rt_debug\\.c:\\d+: "
                + "a queued buffer's bounds, cuts and tail are in order \\(b->base <= b->from && b->from <= b->used && b->used <= b->end\\)\n");
    }

    /**
     * A synchronous fault inside rt_emit_seq's window (between its read of the cursor and its claim) cannot
     * come from the program's memory, so the runtime takes one as its own (rt_signal.c, in_emit_window):
     * the program's SIGSEGV handler, which would record where the event is still being written, is not
     * called; one line says so and the program dies of the signal with the trace readable up to there.
     */
    @Test
    void aFaultWhileTheRuntimeWritesAnEventIsTheRuntimesNotTheProgramsHandlers() throws Exception {
        Path prog = dir.resolve("debug_break-cc");
        Path err = dir.resolve("emit-cc.err"), mtr = dir.resolve("emit.mtr");
        ProcessBuilder broken = new ProcessBuilder(prog.toString(), "emit", err.toString()).redirectOutput(ProcessBuilder.Redirect.DISCARD);
        broken.environment().put("MEMTRACE_OUT", mtr.toString());
        assertThat(broken.start().waitFor()).isEqualTo(128 + 11);
        assertThat(Files.readString(err)).matches("memtrace: the runtime faulted writing an event \\(signal 11 at 0x[0-9a-f]+, "
                + "address 0x8\\); the program's handler is not called\n");
        var printed = Cli.run(dir, "print", "-q", "-o", dir.resolve("emit.trace").toString(), mtr.toString());
        assertThat(printed.status()).as(printed.stderr()).isZero();
        assertThat(Files.readString(dir.resolve("emit.trace"))).contains("# fatal signal 11 (SIGSEGV) ip=rt_emit_seq+");
    }
}
