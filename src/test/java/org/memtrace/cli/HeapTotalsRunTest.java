package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;

/**
 * heap_totals.c's heap totals, exactly, traced in fault mode and compiled in, through the summary of
 * {@code run} and {@code print} (text and JSON) and the report's data. The expected figures are DHAT's on
 * the same program ({@code valgrind --tool=dhat ./heap_totals}, valgrind 3.19): "Total: 1,160 bytes in 14
 * blocks, At t-gmax: 716 bytes in 3 blocks, At t-end: 700 bytes in 2 blocks".
 */
class HeapTotalsRunTest {
    @TempDir static Path dir;
    static Path stream, mtr;
    static Cli.Result faultRun, ccRun;

    @BeforeAll
    static void build() throws Exception {
        try (InputStream in = HeapTotalsRunTest.class.getResourceAsStream("/c/heap_totals.c")) {
            Files.copy(in, dir.resolve("heap_totals.c"));
        }
        Gcc.run(List.of("gcc", "-O0", "-g", "-o", path("ht"), path("heap_totals.c")));
        stream = dir.resolve("ht.stream");
        faultRun = ok(Cli.run(dir, "run", "--mode", "fault", "-o", path("ht.trace"), "--save-stream", stream.toString(),
                "--json-summary", path("ht.json"), "--", path("ht")));
        ok(Cli.run(dir, "cc", "-O0", "-g", "-o", path("htcc"), path("heap_totals.c")));
        ccRun = ok(Cli.run(dir, "run", "-o", path("htcc.trace"), "--json-summary", path("htcc.json"), "--", path("htcc")));
        mtr = dir.resolve("htcc.mtr");
        Gcc.run(List.of(path("htcc")), Map.of("MEMTRACE_OUT", mtr.toString()));
    }

    private static String path(String name) {
        return dir.resolve(name).toString();
    }

    private static Cli.Result ok(Cli.Result r) {
        assertThat(r.status()).as(r.stderr()).isZero();
        return r;
    }

    /** The summary's heap lines, as a user reads them (the peak's event number and block vary by mode). */
    private static void assertHeapLines(String summary) {
        assertThat(summary).as(summary)
                .containsPattern("\n  heap \\(malloc family, bytes as requested\\)\n")
                .containsPattern("\n    allocated +14 blocks +1,160 bytes\n")
                .containsPattern("\n    peak live +3 blocks +716 bytes  at event [0-9,]+ of [0-9,]+ \\(\\d+ %\\), reached by <malloc0005@main\\+\\d+>\n")
                .containsPattern("\n    live at exit \\(not freed\\) +2 blocks +700 bytes\n")
                .containsPattern("\n    temporary +10 blocks +160 bytes  \\(freed by the next allocator call\\)\n")
                .containsPattern("\n    use after free +1 access to freed memory, the first at event [0-9,]+: <freed:0002@main\\+\\d+>\\+0 by main\\+\\d+\n");
    }

    private static void assertHeapJson(JsonNode heap) {
        assertThat(heap.get("allocatedBlocks").asLong()).isEqualTo(14);
        assertThat(heap.get("allocatedBytes").asLong()).isEqualTo(1160);
        assertThat(heap.get("peakLiveBytes").asLong()).isEqualTo(716);
        assertThat(heap.get("peakLiveBlocks").asLong()).isEqualTo(3);
        assertThat(heap.get("peakReachedBy").asText()).startsWith("<malloc0005@main+");
        assertThat(heap.get("liveBlocksAtEnd").asLong()).isEqualTo(2);
        assertThat(heap.get("liveBytesAtEnd").asLong()).isEqualTo(700);
        assertThat(heap.get("endIsExit").asBoolean()).isTrue();
        assertThat(heap.get("temporaryBlocks").asLong()).isEqualTo(10);
        assertThat(heap.get("temporaryBytes").asLong()).isEqualTo(160);
        assertThat(heap.get("freedMemoryAccesses").asLong()).isEqualTo(1);
        assertThat(heap.get("firstFreedMemoryAccess").get("address").asText()).matches("<freed:0002@main\\+\\d+>\\+0");
    }

    /** The names the totals give are the trace's: the block that reached the peak, the freed address read. */
    private static void assertNamesAreTheTraces(JsonNode heap, Path trace) throws Exception {
        String text = Files.readString(trace);
        assertThat(text).contains(heap.get("peakReachedBy").asText(), heap.get("firstFreedMemoryAccess").get("address").asText());
        assertThat(heap.get("firstFreedMemoryAccess").get("sequence").asLong()).isLessThan(heap.get("peakSequence").asLong());
    }

    @Test
    void faultModeRunAndPrint() throws Exception {
        assertHeapLines(faultRun.stderr());
        JsonNode heap = new ObjectMapper().readTree(dir.resolve("ht.json").toFile()).get("heap");
        assertHeapJson(heap);
        assertNamesAreTheTraces(heap, dir.resolve("ht.trace"));
        assertHeapLines(ok(Cli.run(dir, "print", "-o", path("ht2.trace"), stream.toString())).stderr());
    }

    @Test
    void compiledInRunAndPrint() throws Exception {
        assertHeapLines(ccRun.stderr());
        // probes record no callers: the line of the access, and where its callers are recorded
        assertThat(ccRun.stderr()).containsPattern("\n      at main\\+\\d+\\(heap_totals\\.c:\\d+\\)  \\(its callers: not recorded: "
                + "--access-stacks records an instruction's first 4 executions'; a build without memtrace cc under memtrace run --mode fault "
                + "every access's\\)\n");
        assertThat(faultRun.stderr()).doesNotContain("its callers:");
        JsonNode heap = new ObjectMapper().readTree(dir.resolve("htcc.json").toFile()).get("heap");
        assertHeapJson(heap);
        assertNamesAreTheTraces(heap, dir.resolve("htcc.trace"));
        assertHeapLines(ok(Cli.run(dir, "print", "-o", path("htcc2.trace"), mtr.toString())).stderr());
    }

    @Test
    void reportHoldsTheTotalsAndPutsUseAfterFreeFirst() throws Exception {
        for (Path trace : List.of(stream, mtr)) {
            Path html = dir.resolve(trace.getFileName() + ".html");
            ok(Cli.run(dir, "report", trace.toString(), "-o", html.toString()));
            String page = Files.readString(html);
            Matcher m = Pattern.compile("const DATA = (.*);\n</script>").matcher(page);
            assertThat(m.find()).isTrue();
            JsonNode data = new ObjectMapper().readTree(m.group(1));
            assertHeapJson(data.get("heap"));
            // the report's own count of accesses to freed memory agrees with the totals
            assertThat(data.get("freedAccessCount").asLong()).isEqualTo(1);
        }
    }
}
