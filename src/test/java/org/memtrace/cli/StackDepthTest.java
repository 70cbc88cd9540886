package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.InputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.MadtGrammar;

/**
 * Allocation and free stacks ({@code --stack-depth}, docs/stacks.md), in fault mode and built with
 * {@code memtrace cc}: a C program allocating through one wrapper from two call paths and freeing from two
 * paths, then loading from a freed block; a C++ program growing two vectors from two functions. The trace's
 * stack lines, the report's use-after-free row and the summary's program points are asserted exactly; the
 * number of program points and their source lines equal those of {@code valgrind --tool=dhat}.
 */
class StackDepthTest {
    @TempDir static Path dir;

    @BeforeAll
    static void build() throws Exception {
        Gcc.compile(dir, "stacks.c", "stacks", "-g");
        try (InputStream in = StackDepthTest.class.getResourceAsStream("/cpp/stacks_vector.cpp")) {
            Files.copy(in, dir.resolve("vector.cpp"));
        }
        Gcc.run(List.of("g++", "-O0", "-g", "-o", path("vector"), path("vector.cpp")));
        ok(Cli.run(dir, "cc", "-O0", "-g", "-o", path("stacks-cc"), path("stacks.c")));
        ok(Cli.run(dir, "c++", "-O0", "-g", "-o", path("vector-cc"), path("vector.cpp")));
    }

    private static String path(String name) {
        return dir.resolve(name).toString();
    }

    /** Source files are named as compiled: gcc was given their absolute paths in the test's directory. */
    private static String rel(String text) {
        return text.replace(dir + "/", "");
    }

    private static Cli.Result ok(Cli.Result r) {
        assertThat(r.status()).as(r.stderr()).isZero();
        return r;
    }

    /** The trace's stack lines and its allocation and free lines (thread ids cut), every line checked against the grammar. */
    private static List<String> heapLines(String program, String... options) throws Exception {
        Path trace = dir.resolve(program + String.join("", options).replace("-", "") + ".trace");
        List<String> args = new ArrayList<>(List.of("run", "--mode", "fault", "-q", "-o", trace.toString()));
        args.addAll(List.of(options));
        args.addAll(List.of("--", path(program)));
        ok(Cli.run(dir, args.toArray(String[]::new)));
        return heapLinesOf(trace);
    }

    private static List<String> heapLinesOf(Path trace) throws Exception {
        List<String> out = new ArrayList<>();
        for (String l : Files.readAllLines(trace)) {
            assertThat(MadtGrammar.check(l)).as(l).isNull();
            if (l.startsWith("# stack ") || l.matches("[MF]\\$.*")) out.add(rel(URLDecoder.decode(l.replace("+", "%2B"), StandardCharsets.UTF_8)
                    .replaceAll("^([MF]\\$)\\d+:", "$1:").replaceAll(",\\d+(,s\\d+)?$", ",TID$1")));
        }
        return out;
    }

    @Test
    void faultModeTraceHasAllocationAndFreeStacksWithLines() throws Exception {
        // the default depth (12, DHAT's) holds these stacks whole
        assertThat(heapLines("stacks")).containsExactly(
                "# stack 1 xmalloc+24(stacks.c:7) make_left+14(stacks.c:17) main+13(stacks.c:29)",
                "M$:<malloc0001@xmalloc+24>,16,TID,s1",
                "# stack 2 xmalloc+24(stacks.c:7) make_right+14(stacks.c:22) main+22(stacks.c:30)",
                "M$:<malloc0002@xmalloc+24>,32,TID,s2",
                "# stack 3 release+24(stacks.c:12) main+58(stacks.c:33)",
                "F$:<freed:0001@xmalloc+24>,TID,s3",
                // freed by main itself: the call site alone, which the block name already tells
                "F$:<freed:0002@xmalloc+24>,TID");
    }

    @Test
    void compiledInTraceHasTheSameStacks() throws Exception {
        assertThat(heapLines("stacks-cc")).containsExactly(
                "# stack 1 xmalloc+186(stacks.c:7) make_left+142(stacks.c:17) main+145(stacks.c:29)",
                "M$:<malloc0001@xmalloc+186>,16,TID,s1",
                "# stack 2 xmalloc+186(stacks.c:7) make_right+142(stacks.c:22) main+239(stacks.c:30)",
                "M$:<malloc0002@xmalloc+186>,32,TID,s2",
                "# stack 3 release+186(stacks.c:12) main+527(stacks.c:33)",
                "F$:<freed:0001@xmalloc+186>,TID,s3",
                "F$:<freed:0002@xmalloc+186>,TID");
    }

    @Test
    void compiledInProgramRunAloneRecordsStacksByDefault() throws Exception {
        Path mtr = dir.resolve("stacks-cc-alone.mtr"), trace = dir.resolve("stacks-cc-alone.trace");
        Gcc.run(List.of(path("stacks-cc")), Map.of("MEMTRACE_OUT", mtr.toString()));
        ok(Cli.run(dir, "print", "-q", "-o", trace.toString(), mtr.toString()));
        assertThat(heapLinesOf(trace)).startsWith(
                "# stack 1 xmalloc+186(stacks.c:7) make_left+142(stacks.c:17) main+145(stacks.c:29)",
                "M$:<malloc0001@xmalloc+186>,16,TID,s1");
    }

    @Test
    void depthOneTracesAsBefore() throws Exception {
        assertThat(heapLines("stacks", "--stack-depth", "1")).containsExactly(
                "M$:<malloc0001@xmalloc+24>,16,TID", "M$:<malloc0002@xmalloc+24>,32,TID",
                "F$:<freed:0001@xmalloc+24>,TID", "F$:<freed:0002@xmalloc+24>,TID");
        // depth 2 cuts each stack after its second frame
        assertThat(heapLines("stacks", "--stack-depth", "2")).startsWith(
                "# stack 1 xmalloc+24(stacks.c:7) make_left+14(stacks.c:17)", "M$:<malloc0001@xmalloc+24>,16,TID,s1");
    }

    /** The report's data: the JSON inside its page. */
    private static JsonNode reportData(String program) throws Exception {
        Path page = dir.resolve(program + ".html");
        ok(Cli.run(dir, "run", "--mode", "fault", "-q", "-o", "/dev/null", "--stack-depth", "8", "--report", page.toString(), "--", path(program)));
        String html = rel(Files.readString(page));
        int start = html.indexOf("const DATA = ") + "const DATA = ".length();
        return new ObjectMapper().readTree(html.substring(start, html.indexOf('\n', start)).replaceAll(";\\s*$", ""));
    }

    @Test
    void useAfterFreeRowHasBothStacks() throws Exception {
        for (String[] mode : new String[][] {{"stacks", "24", "14", "13", "58"}, {"stacks-cc", "186", "142", "145", "527"}}) {
            JsonNode row = reportData(mode[0]).get("freedAccesses").get(0);
            assertThat(row.get("source").asText()).isEqualTo("stacks.c:35");
            assertThat(row.get("allocationStack")).extracting(JsonNode::asText).containsExactly("xmalloc+" + mode[1] + "(stacks.c:7)",
                    "make_left+" + mode[2] + "(stacks.c:17)", "main+" + mode[3] + "(stacks.c:29)");
            assertThat(row.get("freeStack")).extracting(JsonNode::asText).containsExactly("release+" + mode[1] + "(stacks.c:12)",
                    "main+" + mode[4] + "(stacks.c:33)");
        }
    }

    /** The report's allocation tree: the wrapper's call site first, then one node per caller chain (dh_view's tree). */
    @Test
    void reportTreeMergesTheWrappersTwoCallers() throws Exception {
        JsonNode root = reportData("stacks").get("allocationTree");
        assertThat(root.get("bytes").asLong()).isEqualTo(48);
        assertThat(root.get("programPoints").asInt()).isEqualTo(2);
        JsonNode wrapper = root.get("children").get(0);
        assertThat(root.get("children")).hasSize(1);
        assertThat(wrapper.get("frames")).extracting(JsonNode::asText).containsExactly("xmalloc+24(stacks.c:7)");
        assertThat(wrapper.has("maxLive")).as("a sum of maxima is no maximum").isFalse();
        JsonNode right = wrapper.get("children").get(0), left = wrapper.get("children").get(1);
        assertThat(right.get("frames")).extracting(JsonNode::asText).containsExactly("make_right+14(stacks.c:22)", "main+22(stacks.c:30)");
        assertThat(List.of(right.get("bytes").asLong(), right.get("blocks").asLong(), right.get("maxLive").asLong())).containsExactly(32L, 1L, 32L);
        assertThat(left.get("frames")).extracting(JsonNode::asText).containsExactly("make_left+14(stacks.c:17)", "main+13(stacks.c:29)");
        assertThat(List.of(left.get("bytes").asLong(), left.get("blocks").asLong(), left.get("maxLive").asLong())).containsExactly(16L, 1L, 16L);
    }

    /**
     * The Parquet export's allocation_stack and free_stack columns, read by DuckDB: each heap row carries its
     * block's allocation stack in flame graphs' folded order, the freed block's row too, and that row the stack
     * of the free (a live block's rows have none); rows outside the heap have neither.
     */
    @Test
    void parquetRowsCarryTheBlocksAllocationAndFreeStacks() throws Exception {
        Path stream = dir.resolve("stacks.stream"), parquet = dir.resolve("stacks.parquet");
        ok(Cli.run(dir, "run", "--mode", "fault", "-q", "-o", "/dev/null", "--stack-depth", "8", "--save-stream", stream.toString(), "--", path("stacks")));
        ok(Cli.run(dir, "convert", stream.toString(), "--to", "parquet", "-o", parquet.toString()));
        List<String> rows = new ArrayList<>();
        try (java.sql.Connection db = java.sql.DriverManager.getConnection("jdbc:duckdb:"); java.sql.Statement st = db.createStatement();
             java.sql.ResultSet r = st.executeQuery("SELECT symbol, kind, allocation_stack, free_stack FROM '" + parquet
                     + "' WHERE symbol LIKE '<%' ORDER BY seq")) {
            while (r.next()) rows.add(r.getString(1) + " " + r.getString(2) + " " + rel(r.getString(3)) + " " + rel(String.valueOf(r.getString(4))));
        }
        String left = "main+13(stacks.c:29);make_left+14(stacks.c:17);xmalloc+24(stacks.c:7)";
        assertThat(rows).containsExactly("<malloc0001@xmalloc+24> S " + left + " null",
                "<malloc0002@xmalloc+24> S main+22(stacks.c:30);make_right+14(stacks.c:22);xmalloc+24(stacks.c:7) null",
                "<freed:0001@xmalloc+24> L " + left + " main+58(stacks.c:33);release+24(stacks.c:12)");
        try (java.sql.Connection db = java.sql.DriverManager.getConnection("jdbc:duckdb:"); java.sql.Statement st = db.createStatement();
             java.sql.ResultSet r = st.executeQuery("SELECT count(*), count(free_stack) FROM '" + parquet
                     + "' WHERE allocation_stack IS NULL AND symbol NOT LIKE '<%'")) {
            assertThat(r.next()).isTrue();
            assertThat(r.getLong(1)).as("rows outside the heap's blocks have no stack").isPositive();
            assertThat(r.getLong(2)).as("nor a free stack").isZero();
        }
    }

    @Test
    void summaryListsProgramPoints() throws Exception {
        Cli.Result r = ok(Cli.run(dir, "run", "--mode", "fault", "-o", "/dev/null", "--stack-depth", "8", "--", path("stacks")));
        String heap = rel(r.stderr().substring(r.stderr().indexOf("    program points")));
        assertThat(heap.lines().takeWhile(l -> l.startsWith("    ")).toList()).containsExactly(
                "    program points                       2 allocation stacks (DHAT's program points), the most bytes first:",
                "      1 block 32 bytes, 0 live at end",
                "        at xmalloc+24(stacks.c:7)",
                "        at make_right+14(stacks.c:22)",
                "        at main+22(stacks.c:30)",
                "      1 block 16 bytes, 0 live at end",
                "        at xmalloc+24(stacks.c:7)",
                "        at make_left+14(stacks.c:17)",
                "        at main+13(stacks.c:29)");
    }

    /** file:line of each frame of each program point, as a set of lists, from memtrace's JSON summary. */
    private static TreeSet<String> memtracePoints(String program) throws Exception {
        Path json = dir.resolve(program + ".summary.json");
        ok(Cli.run(dir, "run", "--mode", "fault", "-q", "-o", "/dev/null", "--stack-depth", "12", "--json-summary", json.toString(), "--", path(program)));
        JsonNode heap = new ObjectMapper().readTree(json.toFile()).get("heap");
        TreeSet<String> points = new TreeSet<>();
        for (JsonNode p : heap.get("largestProgramPoints")) {
            List<String> lines = new ArrayList<>();
            for (JsonNode f : p.get("stack")) lines.add(f.asText().replaceAll(".*\\(([^()]*/)?([^()/]+:\\d+)\\)$", "$2"));
            points.add(String.join(" ", lines));
        }
        assertThat(points).hasSize(heap.get("programPoints").asInt());
        return points;
    }

    /** The same from DHAT's output: its frames past the allocator's own, file:line as DHAT prints them. */
    private static TreeSet<String> dhatPoints(String program) throws Exception {
        Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/valgrind")), "valgrind is installed");
        Path out = dir.resolve(program + ".dhat.json");
        Gcc.run(List.of("valgrind", "--tool=dhat", "--dhat-out-file=" + out, path(program)), Map.of());
        JsonNode d = new ObjectMapper().readTree(out.toFile());
        TreeSet<String> points = new TreeSet<>();
        for (JsonNode p : d.get("pps")) {
            List<String> lines = new ArrayList<>();
            for (JsonNode f : p.get("fs")) {
                String frame = d.get("ftbl").get(f.asInt()).asText();
                if (frame.matches(".*\\(\\S+:\\d+\\)$")) lines.add(frame.replaceAll(".*\\((\\S+:\\d+)\\)$", "$1"));
            }
            // points made before main (libstdc++'s start-up pool) are not in a trace that starts at main
            if (!lines.isEmpty() && !frames(d, p).contains("dl-init")) points.add(String.join(" ", lines));
        }
        return points;
    }

    private static String frames(JsonNode d, JsonNode p) {
        StringBuilder all = new StringBuilder();
        for (JsonNode f : p.get("fs")) all.append(d.get("ftbl").get(f.asInt()).asText()).append('\n');
        return all.toString();
    }

    @Test
    void programPointsAreDhats() throws Exception {
        TreeSet<String> c = memtracePoints("stacks");
        assertThat(c).containsExactly("stacks.c:7 stacks.c:17 stacks.c:29", "stacks.c:7 stacks.c:22 stacks.c:30");
        assertThat(c).isEqualTo(dhatPoints("stacks"));
        TreeSet<String> cpp = memtracePoints("vector");
        assertThat(cpp).hasSize(2).isEqualTo(dhatPoints("vector"));
    }

    /** The block names of the M lines, numbers cut. */
    private static TreeSet<String> blocks(String program, String... options) throws Exception {
        TreeSet<String> names = new TreeSet<>();
        for (String l : heapLines(program, options))
            if (l.startsWith("M")) names.add(l.replaceAll("^M\\$:<malloc\\d+@(.*)>,.*", "$1"));
        return names;
    }

    @Test
    void vectorBlocksAreNamedByTheUsersFunction() throws Exception {
        assertThat(blocks("vector")).containsExactly("fill_cubes(int)+70", "fill_squares(int)+61");
        TreeSet<String> cc = blocks("vector-cc");
        // and libstdc++'s emergency pool, from its constructor, which runs after the runtime's (linked -z initfirst)
        assertThat(cc.removeIf(b -> b.matches("libstdc\\+\\+\\.so\\.6\\+0x[0-9a-f]+"))).as(cc.toString()).isTrue();
        assertThat(cc).containsExactly("fill_cubes(int)+390", "fill_squares(int)+362");
        // the call site alone names them by the allocator, as before stacks
        assertThat(blocks("vector", "--stack-depth", "1")).containsExactly("std::__new_allocator<long>::allocate(unsigned long, void const*)+94");
    }

    @Test
    void badDepthIsOneLineAndNonZero() throws Exception {
        for (String depth : List.of("0", "65")) {
            Cli.Result r = Cli.run(dir, "run", "--mode", "fault", "-q", "-o", "/dev/null", "--stack-depth", depth, "--", path("stacks"));
            assertThat(r.status()).isNotZero();
            assertThat(r.stderr().strip()).isEqualTo("memtrace: --stack-depth must be 1 to 64, not " + depth);
        }
    }
}
