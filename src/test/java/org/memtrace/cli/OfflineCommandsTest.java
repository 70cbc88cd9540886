package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TraceFile;

/**
 * memtrace cachesim and convert on a saved stream of the cachewalk fixture, whose cache behaviour follows
 * from the program (see its header), checked against the MadT text trace of the same run.
 */
class OfflineCommandsTest {
    @TempDir static Path dir;
    static Path stream;
    static TraceFile trace;
    static Map<String, Long> symbols = new HashMap<>();

    @BeforeAll
    static void record() throws Exception {
        Path exe = Gcc.compile(dir, "cachewalk.c", "cachewalk", "-g", "-no-pie", "-pthread");
        stream = dir.resolve("cachewalk.stream");
        Path text = dir.resolve("cachewalk.trace");
        var r = Cli.run(dir, "run", "--mode", "fault", "-q", "-o", text.toString(), "--save-stream", stream.toString(), "--", exe.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        trace = TraceFile.read(text);
        for (String line : Gcc.run(List.of("nm", exe.toString())).split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length == 3) symbols.put(f[2], Long.parseUnsignedLong(f[0], 16));
        }
    }

    /** The line of cachewalk.c that holds {@code text}, counting from 1. */
    private static int lineOf(String text) throws Exception {
        List<String> lines = Files.readAllLines(Path.of("src/test/resources/c/cachewalk.c"));
        for (int i = 0; i < lines.size(); i++) if (lines.get(i).contains(text)) return i + 1;
        throw new AssertionError("no line holds " + text);
    }

    private static long accessLines() {
        return trace.lines().stream().filter(TraceFile.Line::access).count();
    }

    /** Loads immediately followed by a store of the same address, instruction, size and thread. */
    private static long readModifyWrites() {
        List<TraceFile.Line> l = trace.lines();
        return IntStream.range(1, l.size()).filter(i -> l.get(i - 1).type() == 'L' && l.get(i).type() == 'S'
                && List.of(0, 2, 3, 4).stream().allMatch(f -> l.get(i - 1).field(f).equals(l.get(i).field(f)))).count();
    }

    private static List<String> convert(String format) throws Exception {
        Path out = dir.resolve("out." + format);
        var r = Cli.run(dir, "convert", stream.toString(), "--to", format, "-o", out.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stderr()).isEmpty();
        return Files.readAllLines(out);
    }

    @Test
    void cachesimChargesColdMissesToTheObjectsAndCountsWhatTheTraceHolds() throws Exception {
        Path json = dir.resolve("sim.json");
        var r = Cli.run(dir, "cachesim", stream.toString(), "--top", "100", "--json", json.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        JsonNode j = new ObjectMapper().readTree(json.toFile());
        assertThat(j.get("accesses").asLong()).isEqualTo(accessLines());
        assertThat(j.get("blockOperations").asLong()).isEqualTo(trace.of('Y').size());
        JsonNode l1 = j.get("levels").get(0);
        // every load and store of the trace touches one line (none straddles), the copy 64 + 64 lines
        assertThat(l1.get("accesses").asLong()).isEqualTo(accessLines() + 128);
        assertThat(l1.get("loads").asLong()).isEqualTo(trace.of('L').size() + 64);

        Map<String, Long> objects = new HashMap<>();
        for (JsonNode o : j.get("objectsByFirstLevelMisses")) objects.put(o.get("name").asText(), o.get("firstLevel").asLong());
        String block = trace.of('M').get(0).field(0), copy = trace.of('M').get(1).field(0);
        assertThat(objects).containsEntry("table", 64L).containsEntry("other", 32L).containsEntry("counter", 1L)
                .containsEntry(block, 64L).containsEntry(copy, 64L);
        // the copy's misses belong to the instruction that called memcpy, named as the trace names it
        String memcpyCaller = trace.of('Y').get(0).field(5);
        List<String> instructions = StreamSupport.stream(j.get("instructionsByFirstLevelMisses").spliterator(), false)
                .filter(i -> i.get("firstLevel").asLong() == 64).map(i -> i.get("name").asText()).toList();
        assertThat(instructions).contains(memcpyCaller);
        assertThat(r.stdout()).contains("top objects by L1 misses").containsPattern("L1 +32k:8:64");
    }

    @Test
    void secondLevelSeesTheFirstLevelsMisses() throws Exception {
        Path json = dir.resolve("sim2.json");
        var r = Cli.run(dir, "cachesim", stream.toString(), "--l1", "1k:2:64", "--l2", "64k:4:64", "--policy", "plru",
                "--json", json.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        JsonNode levels = new ObjectMapper().readTree(json.toFile()).get("levels");
        assertThat(levels.get(1).get("accesses").asLong()).isEqualTo(levels.get(0).get("misses").asLong());
        assertThat(levels.get(1).get("loads").asLong()).isEqualTo(levels.get(0).get("loadMisses").asLong());
        // a 1 KiB L1 cannot hold the 4 KiB block stored before the copy: its dirty lines are written back
        assertThat(levels.get(0).get("writebacks").asLong()).isPositive();
    }

    @Test
    void lackeyShowsTheReadModifyWriteAsModifyAndTheTableInOrder() throws Exception {
        List<String> lines = convert("lackey");
        assertThat(lines).allSatisfy(l -> assertThat(l).matches(" [LSM] [0-9a-f]{8,},\\d+"));
        assertThat(lines).filteredOn(l -> l.equals(String.format(" M %08x,4", symbols.get("counter")))).hasSize(10);
        long table = symbols.get("table");
        List<String> tableLoads = lines.stream().filter(l -> l.startsWith(" L ")
                && Long.parseLong(l.substring(3, l.indexOf(',')), 16) - table < 4096
                && Long.parseLong(l.substring(3, l.indexOf(',')), 16) >= table).toList();
        assertThat(tableLoads).isEqualTo(IntStream.range(0, 1024).mapToObj(i -> String.format(" L %08x,4", table + 4 * i)).toList());
        // each RMW (here and in libc) is one M line instead of a load and a store; the copy is 64 loads and 64 stores
        assertThat(lines).hasSize((int) (accessLines() - readModifyWrites() + 128));
        assertThat(lines).filteredOn(l -> l.startsWith(" M ")).hasSize((int) readModifyWrites());
    }

    @Test
    void pinatraceAndDinListEveryAccessWithItsKind() throws Exception {
        List<String> pin = convert("pinatrace");
        assertThat(pin.getLast()).isEqualTo("#eof");
        assertThat(pin.subList(0, pin.size() - 1)).allSatisfy(l -> assertThat(l).matches("0x[0-9a-f]+: [RW] 0x[0-9a-f]+"));
        long other = symbols.get("other");
        assertThat(pin).filteredOn(l -> l.contains(": W 0x")
                && Long.parseLong(l.substring(l.lastIndexOf("0x") + 2), 16) - other < 2048
                && Long.parseLong(l.substring(l.lastIndexOf("0x") + 2), 16) >= other).hasSize(512);
        assertThat(pin).filteredOn(l -> l.endsWith(": R 0x" + Long.toHexString(symbols.get("counter")))).hasSize(10);
        assertThat(pin).hasSize((int) accessLines() + 128 + 1);

        List<String> din = convert("din");
        assertThat(din).allSatisfy(l -> assertThat(l).matches("[01] [0-9a-f]+"));
        assertThat(din).hasSize((int) accessLines() + 128);
        assertThat(din.stream().filter(l -> l.startsWith("1 ")).count()).isEqualTo(trace.of('S').size() + 64);
    }

    @Test
    void csvHasOneRowPerAccessWithTheTracesNames() throws Exception {
        List<String> csv = convert("csv");
        assertThat(csv.getFirst()).isEqualTo("seq,kind,store,address,size,ip,instruction,thread,region,symbol,offset,source");
        assertThat(csv).hasSize((int) accessLines() + 2 + 1);
        TraceFile.Line first = trace.of('L').stream().filter(l -> l.field(0).equals("table[0]+0")).findFirst().orElseThrow();
        assertThat(csv).contains(String.join(",", Long.toString(first.sequence()), "L", "false",
                Long.toString(symbols.get("table")), "4", Long.toString(Long.parseLong(csv.stream()
                        .filter(l -> l.startsWith(first.sequence() + ",")).findFirst().orElseThrow().split(",")[5])),
                first.field(2), first.field(4), first.field(1), "table", "0") + "," + dir.resolve("cachewalk.c") + ":" + lineOf("sum += table[i]"));
        TraceFile.Line y = trace.of('Y').get(0);
        List<String> copyRows = csv.stream().filter(l -> l.startsWith(y.sequence() + ",Y,")).toList();
        assertThat(copyRows).hasSize(2);
        // the source column names memcpy's caller, a line of cachewalk.c
        assertThat(copyRows.get(0)).contains(",false,").containsPattern(java.util.regex.Pattern.quote("," + y.field(2).replace("+0", "") + ",0,") + "[^,]*cachewalk\\.c:\\d+$");
        assertThat(copyRows.get(1)).contains(",true,").containsPattern(java.util.regex.Pattern.quote("," + y.field(0).replace("+0", "") + ",0,") + "[^,]*cachewalk\\.c:\\d+$");
    }

    @Test
    void parquetAnswersSqlAboutAccessesPerObjectPerThread() throws Exception {
        Path out = dir.resolve("out.parquet");
        var r = Cli.run(dir, "convert", stream.toString(), "--to", "parquet", "-o", out.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        try (Connection db = DriverManager.getConnection("jdbc:duckdb:");
             PreparedStatement q = db.prepareStatement(
                     "SELECT symbol, thread, count(*) AS accesses, sum(CASE WHEN store THEN 1 ELSE 0 END) AS writes "
                             + "FROM read_parquet(?) WHERE symbol IN ('table', 'other', 'counter') "
                             + "GROUP BY symbol, thread ORDER BY symbol")) {
            q.setString(1, out.toString());
            List<String> rows = new ArrayList<>();
            Map<String, Integer> thread = new HashMap<>();
            try (ResultSet rs = q.executeQuery()) {
                while (rs.next()) {
                    rows.add(rs.getString("symbol") + " " + rs.getLong("accesses") + " " + rs.getLong("writes"));
                    thread.put(rs.getString("symbol"), rs.getInt("thread"));
                }
            }
            assertThat(rows).containsExactly("counter 20 10", "other 512 512", "table 1024 0");
            assertThat(thread.get("other")).isNotEqualTo(thread.get("table"));
            assertThat(thread.get("counter")).isEqualTo(thread.get("table"));
            try (ResultSet rs = db.createStatement().executeQuery("SELECT count(*), count(DISTINCT seq), max(\"offset\") FILTER (symbol = 'table') "
                    + "FROM read_parquet('" + out + "')")) {
                rs.next();
                assertThat(rs.getLong(1)).isEqualTo(accessLines() + 2);
                assertThat(rs.getLong(2)).isEqualTo(accessLines() + 1);
                assertThat(rs.getLong(3)).isEqualTo(4092);
            }
        }
    }

    /**
     * A Hive-style dataset, by thread and at most 1,000 rows a file, holds the single file's rows: each
     * thread's rows in its own directory, files of 1,000 rows but the last, every file with the trace's
     * metadata; DuckDB reads the directory as one table, the thread from the path equal to the column.
     */
    @Test
    void parquetDatasetByThreadHoldsTheSameRows() throws Exception {
        Path single = dir.resolve("single.parquet"), set = dir.resolve("set");
        var r = Cli.run(dir, "convert", stream.toString(), "--to", "parquet", "-o", single.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        r = Cli.run(dir, "convert", stream.toString(), "--to", "parquet", "--partition-by", "thread", "--max-rows-per-file", "1000",
                "-o", set.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stderr()).isEmpty();
        String all = "read_parquet('" + set + "/**/*.parquet', hive_partitioning = true, hive_types = {'thread': INTEGER})";
        try (Connection db = DriverManager.getConnection("jdbc:duckdb:"); var st = db.createStatement()) {
            assertThat(longs(st, "SELECT (SELECT count(*) FROM " + all + "), "
                    + "(SELECT count(*) FROM (SELECT * FROM " + all + " EXCEPT ALL SELECT * FROM read_parquet('" + single + "'))), "
                    + "(SELECT count(*) FROM (SELECT * FROM read_parquet('" + single + "') EXCEPT ALL SELECT * FROM " + all + "))"))
                    .containsExactly(accessLines() + 2, 0L, 0L);
            // per file: its directory's thread only, and 1,000 rows unless it is its thread's last
            List<String> files = new ArrayList<>();
            try (ResultSet rs = st.executeQuery("SELECT filename, count(*), min(thread), max(thread) FROM read_parquet('" + set
                    + "/**/*.parquet', filename = true) GROUP BY filename ORDER BY filename")) {
                while (rs.next()) {
                    String file = rs.getString(1);
                    assertThat(file).contains("/thread=" + rs.getInt(3) + "/part-");
                    assertThat(rs.getInt(3)).isEqualTo(rs.getInt(4));
                    files.add(file.substring(file.indexOf("thread=")) + " " + rs.getLong(2));
                }
            }
            Map<String, Long> perThread = new HashMap<>();
            try (ResultSet rs = st.executeQuery("SELECT thread, count(*) FROM read_parquet('" + single + "') GROUP BY thread")) {
                while (rs.next()) perThread.put("thread=" + rs.getInt(1), rs.getLong(2));
            }
            List<String> expected = new ArrayList<>();
            perThread.forEach((t, n) -> {
                for (long part = 0; part * 1000 < n; part++)
                    expected.add(t + String.format("/part-%05d.parquet %d", part, Math.min(1000, n - part * 1000)));
            });
            assertThat(files).containsExactlyInAnyOrderElementsOf(expected);
            assertThat(perThread).hasSize(2);
            // every file says which program, trace and memtrace it came from; the last ones that the trace was whole
            List<String> kv = new ArrayList<>();
            try (ResultSet rs = st.executeQuery("SELECT DISTINCT decode(key) || '=' || decode(value) FROM parquet_kv_metadata('"
                    + set + "/**/*.parquet') WHERE decode(key) IN ('memtrace.program', 'memtrace.schema', 'memtrace.complete')")) {
                while (rs.next()) kv.add(rs.getString(1));
            }
            assertThat(kv).containsExactlyInAnyOrder("memtrace.program=" + dir.resolve("cachewalk"), "memtrace.schema=2",
                    "memtrace.complete=true");
        }
    }

    @Test
    void aDatasetIsRefusedWhereItCannotBeMadeWhole() throws Exception {
        Path exists = Files.createDirectories(dir.resolve("exists"));
        var r = Cli.run(dir, "convert", stream.toString(), "--to", "parquet", "--partition-by", "thread", "-o", exists.toString());
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.stderr()).contains("it exists").doesNotContain("Exception").hasLineCount(1);
        r = Cli.run(dir, "convert", stream.toString(), "--to", "csv", "--partition-by", "thread", "-o", dir.resolve("x").toString());
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.stderr()).contains("with --to parquet").hasLineCount(1);
        r = Cli.run(dir, "convert", stream.toString(), "--to", "parquet", "--partition-by", "symbol", "-o", dir.resolve("x").toString());
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.stderr()).contains("cannot partition by 'symbol'");
        r = Cli.run(dir, "convert", stream.toString(), "--to", "parquet", "--max-rows-per-file", "0", "-o", dir.resolve("x").toString());
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.stderr()).contains("positive").hasLineCount(1);
        assertThat(dir.resolve("x")).doesNotExist();
        try (var list = Files.list(dir)) {
            assertThat(list.map(p -> p.getFileName().toString())).noneMatch(n -> n.endsWith(".partial"));
        }
    }

    @Test
    void parquetHoldsTheRowsOfTheCsvExport() throws Exception {
        Path csv = dir.resolve("same.csv"), parquet = dir.resolve("same.parquet");
        for (Path out : List.of(csv, parquet)) {
            String format = out.toString().substring(out.toString().lastIndexOf('.') + 1);
            var r = Cli.run(dir, "convert", stream.toString(), "--to", format, "-o", out.toString());
            assertThat(r.status()).as(r.stderr()).isZero();
        }
        // the CSV's columns: the allocation stack is Parquet's alone
        String p = "(SELECT * EXCLUDE (allocation_stack, free_stack) FROM read_parquet('" + parquet + "'))";
        String c = "read_csv('" + csv + "', header = true, auto_detect = false, columns = {'seq': 'UBIGINT', "
                + "'kind': 'VARCHAR', 'store': 'BOOLEAN', 'address': 'UBIGINT', 'size': 'UBIGINT', 'ip': 'UBIGINT', "
                + "'instruction': 'VARCHAR', 'thread': 'INTEGER', 'region': 'VARCHAR', 'symbol': 'VARCHAR', 'offset': 'UBIGINT', 'source': 'VARCHAR'})";
        try (Connection db = DriverManager.getConnection("jdbc:duckdb:");
             ResultSet rs = db.createStatement().executeQuery("SELECT (SELECT count(*) FROM " + p + "), "
                     + "(SELECT count(*) FROM (SELECT * FROM " + p + " EXCEPT ALL SELECT * FROM " + c + ")), "
                     + "(SELECT count(*) FROM (SELECT * FROM " + c + " EXCEPT ALL SELECT * FROM " + p + "))")) {
            rs.next();
            assertThat(rs.getLong(1)).isEqualTo(accessLines() + 2);
            assertThat(rs.getLong(2)).isZero();
            assertThat(rs.getLong(3)).isZero();
        }
    }

    private static List<Long> longs(java.sql.Statement st, String sql) throws Exception {
        try (ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            List<Long> values = new ArrayList<>();
            for (int c = 1; c <= rs.getMetaData().getColumnCount(); c++) values.add(rs.getLong(c));
            return values;
        }
    }
}
