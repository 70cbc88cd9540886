package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.MadtGrammar;
import org.memtrace.testutil.TraceFile;

/**
 * Three objects called {@code table} (a static in file1.c, one in file2.c, one in a shared library the
 * program links) are three objects everywhere: the trace, the report, cachesim, the CSV and Parquet exports
 * name them {@code table@file1.c}, {@code table@file2.c} and {@code table@libdup.so} (docs/naming.md,
 * "Objects with one name") and count each one's accesses apart, recorded in fault mode and compiled in.
 * file2.c's table lies above file1.c's and is touched first: the order that crashed the report. The report's
 * per-object counts equal the trace's for every object.
 */
class SameNamedObjectsTest {
    @TempDir static Path dir;
    static Path stream, mtr;

    /** Loads and stores of each table per samename_main.c: 2 loads and 1 store per call, 5, 3 and 7 calls. */
    private static Map<String, List<Long>> expected(String library) {
        return Map.of("table@file2.c", List.of(10L, 5L), "table@file1.c", List.of(6L, 3L), "table@" + library, List.of(14L, 7L));
    }

    @BeforeAll
    static void build() throws Exception {
        for (String f : List.of("main.c", "file1.c", "file2.c", "lib.c")) {
            try (InputStream in = SameNamedObjectsTest.class.getResourceAsStream("/c/samename_" + f)) {
                Files.copy(in, dir.resolve(f));
            }
        }
        String rpath = "-Wl,-rpath," + dir;
        Gcc.run(List.of("gcc", "-O0", "-g", "-shared", "-fPIC", "-o", path("libdup.so"), path("lib.c")));
        Gcc.run(List.of("gcc", "-O0", "-g", "-o", path("dup"), path("main.c"), path("file1.c"), path("file2.c"),
                "-L" + dir, "-ldup", rpath));
        // the premise of the report's crash: file2.c's table (the second in .symtab, which keeps link order) above file1.c's
        List<Long> tables = new ArrayList<>();
        for (String line : Gcc.run(List.of("readelf", "-Ws", path("dup"))).split("\n")) {
            if (line.endsWith(" table")) tables.add(Long.parseUnsignedLong(line.trim().split("\\s+")[1], 16));
        }
        assertThat(tables).hasSize(2);
        assertThat(tables.get(1)).isGreaterThan(tables.get(0));
        stream = dir.resolve("dup.stream");
        ok(Cli.run(dir, "run", "--mode", "fault", "-q", "-o", path("dup.trace"), "--save-stream", stream.toString(), "--", path("dup")));

        ok(Cli.run(dir, "cc", "-O0", "-g", "-shared", "-fPIC", "-o", path("libdupcc.so"), path("lib.c")));
        ok(Cli.run(dir, "cc", "-O0", "-g", "-o", path("dupcc"), path("main.c"), path("file1.c"), path("file2.c"),
                "-L" + dir, "-ldupcc", rpath));
        mtr = dir.resolve("dupcc.mtr");
        Gcc.run(List.of(path("dupcc")), Map.of("MEMTRACE_OUT", mtr.toString()));
    }

    private static String path(String name) {
        return dir.resolve(name).toString();
    }

    private static Cli.Result ok(Cli.Result r) {
        assertThat(r.status()).as(r.stderr()).isZero();
        return r;
    }

    /** Loads and stores per table of a printed trace, by the object (the name without its index). */
    private static Map<String, List<Long>> tables(Path text) throws Exception {
        assertThat(Files.readAllLines(text)).allSatisfy(l -> assertThat(MadtGrammar.check(l)).as(l).isNull());
        Map<String, List<Long>> counts = new TreeMap<>();
        for (TraceFile.Line l : TraceFile.read(text).lines()) {
            if (!l.access() || !l.field(0).startsWith("table")) continue;
            String object = l.field(0).replaceAll("\\[\\d+\\]", "").replaceAll("\\+\\d+$", "");
            List<Long> c = counts.computeIfAbsent(object, k -> new ArrayList<>(List.of(0L, 0L)));
            c.set(l.type() == 'L' ? 0 : 1, c.get(l.type() == 'L' ? 0 : 1) + 1);
        }
        return counts;
    }

    @Test
    void faultModeTraceNamesEachTableApart() throws Exception {
        assertThat(tables(dir.resolve("dup.trace"))).isEqualTo(expected("libdup.so"));
        // the index path comes before the qualifier, the offset stays last
        assertThat(Files.readString(dir.resolve("dup.trace"))).contains(":table[4]@file2.c+0,dup,touch2+")
                .contains(":table[6]@libdup.so+0,libdup.so,touch3+").doesNotContain(":table[0]+0");
    }

    @Test
    void compiledInTraceNamesEachTableApart() throws Exception {
        ok(Cli.run(dir, "print", "-q", "-o", path("dupcc.trace"), mtr.toString()));
        assertThat(tables(dir.resolve("dupcc.trace"))).isEqualTo(expected("libdupcc.so"));
    }

    private static JsonNode report(Path trace, String name) throws Exception {
        Path html = dir.resolve(name);
        Cli.Result r = ok(Cli.run(dir, "report", trace.toString(), "-o", html.toString(), "--top", "1000"));
        assertThat(r.stderr()).isEmpty();
        Matcher m = Pattern.compile("const DATA = (.*);\n</script>").matcher(Files.readString(html));
        assertThat(m.find()).isTrue();
        return new ObjectMapper().readTree(m.group(1));
    }

    /** Loads and stores per object as the CSV export's symbol column names them: Naming.object, as the trace. */
    private static Map<String, List<Long>> csvObjects(Path trace, String name) throws Exception {
        Path csv = dir.resolve(name);
        ok(Cli.run(dir, "convert", trace.toString(), "--to", "csv", "-o", csv.toString()));
        Map<String, List<Long>> counts = new TreeMap<>();
        for (String line : Files.readAllLines(csv).subList(1, Files.readAllLines(csv).size())) {
            String[] f = line.split(",", -1);
            if (!f[1].equals("L") && !f[1].equals("S")) continue;
            String object = f[9].isEmpty() ? "[unknown]" : f[9];
            List<Long> c = counts.computeIfAbsent(object, k -> new ArrayList<>(List.of(0L, 0L)));
            c.set(f[1].equals("L") ? 0 : 1, c.get(f[1].equals("L") ? 0 : 1) + 1);
        }
        return counts;
    }

    /** Every object's loads and stores in the report, summed by name (two [anon] mappings are two rows). */
    private static Map<String, List<Long>> reportObjects(JsonNode data) {
        Map<String, List<Long>> counts = new TreeMap<>();
        for (JsonNode o : data.get("objects")) {
            List<Long> c = counts.computeIfAbsent(o.get("name").asText(), k -> new ArrayList<>(List.of(0L, 0L)));
            c.set(0, c.get(0) + o.get("loads").asLong());
            c.set(1, c.get(1) + o.get("stores").asLong());
        }
        return counts;
    }

    @Test
    void reportShowsEachTableAndCountsAsTheTraceDoes() throws Exception {
        for (Path trace : List.of(stream, mtr)) {
            String library = trace == stream ? "libdup.so" : "libdupcc.so";
            JsonNode data = report(trace, trace.getFileName() + ".html");
            Map<String, List<Long>> objects = reportObjects(data);
            assertThat(objects).containsAllEntriesOf(expected(library)).doesNotContainKey("table");
            // the crash: a grid per table, offsets from each one's own start
            List<String> maps = new ArrayList<>();
            data.get("objectMaps").forEach(g -> maps.add(g.get("name").asText()));
            assertThat(maps).containsAll(expected(library).keySet());
            assertThat(objects).as(trace.toString()).isEqualTo(csvObjects(trace, trace.getFileName() + ".csv"));
        }
    }

    @Test
    void cachesimChargesEachTableItsOwnMiss() throws Exception {
        Path json = dir.resolve("sim.json");
        ok(Cli.run(dir, "cachesim", stream.toString(), "--top", "1000", "--json", json.toString()));
        Map<String, Long> misses = new TreeMap<>();
        for (JsonNode o : new ObjectMapper().readTree(json.toFile()).get("objectsByFirstLevelMisses")) {
            if (o.get("name").asText().startsWith("table")) misses.put(o.get("name").asText(), o.get("firstLevel").asLong());
        }
        // each table's touched ints lie in one line: one cold miss each
        assertThat(misses).isEqualTo(Map.of("table@file1.c", 1L, "table@file2.c", 1L, "table@libdup.so", 1L));
    }

    @Test
    void csvAndParquetGroupByTheQualifiedSymbol() throws Exception {
        Map<String, List<Long>> csv = csvObjects(stream, "dup.csv");
        assertThat(csv).containsAllEntriesOf(expected("libdup.so")).doesNotContainKey("table");
        Path parquet = dir.resolve("dup.parquet");
        ok(Cli.run(dir, "convert", stream.toString(), "--to", "parquet", "-o", parquet.toString()));
        try (Connection db = DriverManager.getConnection("jdbc:duckdb:");
             ResultSet rs = db.createStatement().executeQuery("SELECT symbol, count(*) FILTER (NOT store), count(*) FILTER (store) "
                     + "FROM read_parquet('" + parquet + "') WHERE symbol LIKE 'table%' AND kind IN ('L', 'S') GROUP BY symbol")) {
            Map<String, List<Long>> rows = new TreeMap<>();
            while (rs.next()) rows.put(rs.getString(1), List.of(rs.getLong(2), rs.getLong(3)));
            assertThat(rows).isEqualTo(expected("libdup.so"));
        }
    }

    /** The metadata names the program and, for one built by memtrace cc, the options it was built with. */
    @Test
    void parquetMetadataSaysHowMemtraceCcBuiltTheProgram() throws Exception {
        Path built = dir.resolve("dupcc.parquet"), plain = dir.resolve("dupplain.parquet");
        ok(Cli.run(dir, "convert", mtr.toString(), "--to", "parquet", "-o", built.toString()));
        ok(Cli.run(dir, "convert", stream.toString(), "--to", "parquet", "-o", plain.toString()));
        String query = "SELECT decode(key) || '=' || decode(value) FROM parquet_kv_metadata('%s') WHERE decode(key) IN ('memtrace.program', 'memtrace.program.cc_options')";
        try (Connection db = DriverManager.getConnection("jdbc:duckdb:"); var st = db.createStatement()) {
            assertThat(strings(st, query.formatted(built))).containsExactly("memtrace.program=" + path("dupcc"),
                    "memtrace.program.cc_options=memtrace cc --omega 1.0 --chunk 4096 --scores 1,2,4 --mode log");
            assertThat(strings(st, query.formatted(plain))).containsExactly("memtrace.program=" + path("dup"));
        }
    }

    private static List<String> strings(java.sql.Statement st, String query) throws Exception {
        List<String> rows = new ArrayList<>();
        try (ResultSet rs = st.executeQuery(query)) {
            while (rs.next()) rows.add(rs.getString(1));
        }
        return rows;
    }
}
