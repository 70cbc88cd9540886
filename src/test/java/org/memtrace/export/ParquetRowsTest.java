package org.memtrace.export;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedOutputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.analysis.Analysis;
import org.memtrace.analysis.Ending;
import org.memtrace.analysis.Interpretation;
import org.memtrace.event.Event;
import org.memtrace.trace.InstructionShapes;
import org.memtrace.trace.Naming;

/**
 * The Parquet writer read back by DuckDB: more rows than one row group holds, more distinct instructions
 * than 8-bit dictionary indices reach, unnamed addresses (null symbol and offset) and block copies, and
 * the rows equal the CSV export's of the same events.
 */
class ParquetRowsTest {
    private static final long BLOCK = 0x5000_0000L;
    private static final int ROWS = ParquetRows.ROWS + 1000, INSTRUCTIONS = 300;

    @TempDir Path dir;

    /** A 4 KiB heap block named {@code blk}, everything else unnamed; code {@code f+N}. */
    private static final class OneBlock implements Naming {
        @Override public void observe(Event event) {}
        @Override public String region(long address) { return address >= BLOCK ? "[heap]" : "prog"; }
        @Override public String data(long address) {
            return address >= BLOCK && address < BLOCK + 4096 ? "blk+" + (address - BLOCK) : "0x" + Long.toHexString(address);
        }
        @Override public long sameObjectUntil(long address) {
            return address >= BLOCK && address < BLOCK + 4096 ? BLOCK + 4096 : address + 1;
        }
        @Override public String code(long ip) { return "f+" + (ip - 0x401000); }
        /** Every other instruction has a line ({@code f.c:N}), the others none: a source column with nulls. */
        @Override public String source(long ip) { return ip % 2 == 0 ? "f.c:" + (ip - 0x401000) / 2 : null; }
        @Override public String block(Event.Alloc allocation) { return NO_BLOCK; }
    }

    private static List<Event> events() {
        List<Event> events = new ArrayList<>();
        for (int i = 0; i < ROWS; i++) {
            long address = i % 2 == 0 ? BLOCK + i % 4096 : 0x10 + i;
            events.add(new Event.Access(1 + i % 2, 0x401000 + i % INSTRUCTIONS, address, i % 3 == 0, false));
            if (i % 100_000 == 0) events.add(new Event.Block(1, Event.BlockOp.COPY, false, 0x402000, BLOCK + 64, 0x1000, 128, 1));
        }
        return events;
    }

    /** A writer of rows to a stream. */
    private interface Writer {
        Analysis open(Naming naming, OutputStream out) throws java.io.IOException;
    }

    private Path export(String name, Writer writer) throws Exception {
        Path file = dir.resolve(name);
        OneBlock naming = new OneBlock();
        try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(file))) {
            Interpretation stage = new Interpretation(naming, InstructionShapes.UNKNOWN, List.of(writer.open(naming, out)));
            events().forEach(stage::accept);
            assertThat(stage.finish(Ending.offline(ROWS, stage.events(), 0, Map.of()))).isEmpty();
        }
        return file;
    }

    @Test
    void duckDbReadsTheRowsTheCsvExportHas() throws Exception {
        Path parquet = export("t.parquet", ParquetRows::new);
        Path csv = export("t.csv", TraceRows::new);
        String p = "read_parquet('" + parquet + "')";
        String c = "read_csv('" + csv + "', header = true, auto_detect = false, columns = {'seq': 'UBIGINT', "
                + "'kind': 'VARCHAR', 'store': 'BOOLEAN', 'address': 'UBIGINT', 'size': 'UBIGINT', 'ip': 'UBIGINT', "
                + "'instruction': 'VARCHAR', 'thread': 'INTEGER', 'region': 'VARCHAR', 'symbol': 'VARCHAR', 'offset': 'UBIGINT', 'source': 'VARCHAR'})";
        try (Connection db = DriverManager.getConnection("jdbc:duckdb:"); Statement st = db.createStatement()) {
            int copies = (ROWS + 99_999) / 100_000;
            assertThat(longs(st, "SELECT count(*), count(DISTINCT instruction), count(symbol), count(\"offset\"), "
                    + "max(\"offset\") FILTER (kind = 'L'), count(*) FILTER (store), count(*) FILTER (kind = 'Y') FROM " + p))
                    .containsExactly(ROWS + 2L * copies, INSTRUCTIONS + 1L, ROWS / 2 + 1L * copies, ROWS / 2 + 1L * copies,
                            4094L, (ROWS + 2) / 3 + 1L * copies, 2L * copies);
            // a row of the second row group, as the stage numbered and named it
            int i = ParquetRows.ROWS + 6;
            try (ResultSet rs = st.executeQuery("SELECT kind, store, address, size, ip, instruction, thread, region, symbol, \"offset\" FROM "
                    + p + " WHERE seq = " + (i + i / 100_000 + 1))) {
                assertThat(rs.next()).isTrue();
                assertThat(List.of(rs.getString(1), rs.getBoolean(2), rs.getLong(3), rs.getLong(4), rs.getLong(5), rs.getString(6),
                        rs.getInt(7), rs.getString(8), rs.getString(9), rs.getLong(10)))
                        .containsExactly("L", false, BLOCK + i % 4096, 0L, 0x401000L + i % INSTRUCTIONS, "f+" + i % INSTRUCTIONS,
                                1, "[heap]", "blk", (long) (i % 4096));
            }
            assertThat(longs(st, "SELECT (SELECT count(*) FROM (SELECT * EXCLUDE (allocation_stack, free_stack) FROM " + p + " EXCEPT ALL SELECT * FROM " + c + ")), "
                    + "(SELECT count(*) FROM (SELECT * FROM " + c + " EXCEPT ALL SELECT * EXCLUDE (allocation_stack, free_stack) FROM " + p + "))")).containsExactly(0L, 0L);
            // every column chunk is zstd-compressed, and the stated sizes are what DuckDB finds
            List<String> codecs = new ArrayList<>();
            try (ResultSet rs = st.executeQuery("SELECT DISTINCT compression FROM parquet_metadata('" + parquet + "')")) {
                while (rs.next()) codecs.add(rs.getString(1));
            }
            assertThat(codecs).containsExactly("ZSTD");
            assertThat(longs(st, "SELECT count(*) FILTER (total_compressed_size < total_uncompressed_size), count(*) FROM "
                    + "parquet_metadata('" + parquet + "') WHERE path_in_schema IN ('seq', 'address')")).containsExactly(4L, 4L);
        }
    }

    /**
     * Addresses over the whole unsigned 64-bit range, in runs that walk up, walk down and jump: deltas of every
     * bit width up to 64 (wrapping ones included) in the delta-encoded columns, and a last block that stops
     * inside a miniblock; dictionary indices in long runs, short runs and none.
     */
    @Test
    void deltaAndRunEncodedColumnsKeepEveryRow() throws Exception {
        java.util.SplittableRandom r = new java.util.SplittableRandom(5);
        List<Event> events = new ArrayList<>();
        long address = 0;
        int n = 3 * 128 * 32 + 77;
        for (int i = 0; i < n; i++) {
            address = switch (i / 500 % 3) {
                case 0 -> address + 8;
                case 1 -> address - (1L << (i % 64));
                default -> r.nextLong();
            };
            // instructions in one long run, in runs of 9 (RLE runs after a group's top-up), and changing every row
            long ip = 0x401000 + switch (i / 500 % 3) {
                case 0 -> 0;
                case 1 -> i / 9 % 2;
                default -> i % 5;
            };
            events.add(new Event.Access(1, ip, i % 7 == 0 ? BLOCK + i % 4096 : address, false, false));
        }
        Path parquet = dir.resolve("wide.parquet"), csv = dir.resolve("wide.csv");
        for (Path file : List.of(parquet, csv)) {
            OneBlock naming = new OneBlock();
            try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(file))) {
                Analysis rows = file == parquet ? new ParquetRows(naming, out) : new TraceRows(naming, out);
                Interpretation stage = new Interpretation(naming, InstructionShapes.UNKNOWN, List.of(rows));
                events.forEach(stage::accept);
                assertThat(stage.finish(Ending.offline(n, stage.events(), 0, Map.of()))).isEmpty();
            }
        }
        String p = "read_parquet('" + parquet + "')";
        String c = "read_csv('" + csv + "', header = true, auto_detect = false, columns = {'seq': 'UBIGINT', "
                + "'kind': 'VARCHAR', 'store': 'BOOLEAN', 'address': 'UBIGINT', 'size': 'UBIGINT', 'ip': 'UBIGINT', "
                + "'instruction': 'VARCHAR', 'thread': 'INTEGER', 'region': 'VARCHAR', 'symbol': 'VARCHAR', 'offset': 'UBIGINT', 'source': 'VARCHAR'})";
        try (Connection db = DriverManager.getConnection("jdbc:duckdb:"); Statement st = db.createStatement()) {
            assertThat(longs(st, "SELECT count(*), count(DISTINCT address), count(\"offset\") FROM " + p))
                    .containsExactly((long) n, longs(st, "SELECT count(DISTINCT address) FROM " + c).getFirst(), (n + 6) / 7L);
            assertThat(longs(st, "SELECT (SELECT count(*) FROM (SELECT * EXCLUDE (allocation_stack, free_stack) FROM " + p + " EXCEPT ALL SELECT * FROM " + c + ")), "
                    + "(SELECT count(*) FROM (SELECT * FROM " + c + " EXCEPT ALL SELECT * EXCLUDE (allocation_stack, free_stack) FROM " + p + "))")).containsExactly(0L, 0L);
            List<String> encodings = new ArrayList<>();
            try (ResultSet rs = st.executeQuery("SELECT path_in_schema, encodings FROM parquet_metadata('" + parquet
                    + "') WHERE path_in_schema IN ('seq', 'address', 'offset') ORDER BY path_in_schema")) {
                while (rs.next()) encodings.add(rs.getString(1) + " " + rs.getString(2));
            }
            assertThat(encodings).allSatisfy(e -> assertThat(e).contains("DELTA_BINARY_PACKED")).hasSize(3);
        }
    }

    /**
     * Each row group's statistics equal what DuckDB computes over that group's rows (unsigned order for the
     * UINT_64 columns, nulls counted for the optional ones, the dictionary columns' distinct values), and the
     * footer's key/value metadata is read back as written.
     */
    @Test
    void statisticsAndMetadataAreTheRowsOwn() throws Exception {
        Path file = dir.resolve("stats.parquet");
        OneBlock naming = new OneBlock();
        List<Event> events = events();
        // an address above 2^63: signed order would call it the smallest
        events.add(new Event.Access(2, 0x401001, 0xFFFF_FFFF_0000_0000L, true, false));
        try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(file))) {
            ParquetRows rows = new ParquetRows(naming, out);
            rows.metadata(() -> {
                java.util.SequencedMap<String, String> kv = new java.util.LinkedHashMap<>();
                kv.put("memtrace.trace", "t.mtr");
                kv.put("memtrace.program", "/usr/bin/präsent");
                return kv;
            });
            Interpretation stage = new Interpretation(naming, InstructionShapes.UNKNOWN, List.of(rows));
            events.forEach(stage::accept);
            assertThat(stage.finish(Ending.offline(ROWS, stage.events(), 0, Map.of()))).isEmpty();
        }
        String p = "read_parquet('" + file + "', file_row_number = true)";
        try (Connection db = DriverManager.getConnection("jdbc:duckdb:"); Statement st = db.createStatement()) {
            List<String> stated = strings(st, "SELECT row_group_id || ' ' || path_in_schema || ' ' || coalesce(stats_min_value, '-') || ' '"
                    + " || coalesce(stats_max_value, '-') || ' ' || stats_null_count || ' ' || coalesce(stats_distinct_count::VARCHAR, '-')"
                    + " FROM parquet_metadata('" + file + "') ORDER BY row_group_id, column_id");
            List<String> computed = new ArrayList<>();
            for (String column : NamedRows.PARQUET_COLUMNS) {
                boolean dictionary = !List.of("seq", "store", "address", "offset").contains(column);
                String c = '"' + column + '"';
                computed.addAll(strings(st, "SELECT g || ' " + column + " ' || coalesce(lo::VARCHAR, '-') || ' ' || coalesce(hi::VARCHAR, '-')"
                        + " || ' ' || nulls || ' ' || d FROM (SELECT file_row_number // " + ParquetRows.ROWS + " AS g, min(" + c + ") AS lo, "
                        + "max(" + c + ") AS hi, count(*) - count(" + c + ") AS nulls, "
                        + (dictionary ? "count(DISTINCT " + c + ")::VARCHAR" : "'-'") + " AS d FROM " + p + " GROUP BY g) ORDER BY g"));
            }
            assertThat(stated).hasSize(2 * NamedRows.PARQUET_COLUMNS.size()).containsExactlyInAnyOrderElementsOf(computed);
            assertThat(stated).contains("1 address 1048571 18446744069414584320 0 -", "0 store false true 0 -");
            assertThat(strings(st, "SELECT decode(key) || '=' || decode(value) FROM parquet_kv_metadata('" + file + "')"))
                    .containsExactly("memtrace.trace=t.mtr", "memtrace.program=/usr/bin/präsent");
        }
    }

    @Test
    void anEmptyTraceIsAFileWithTheColumnsAndNoRows() throws Exception {
        Path file = dir.resolve("empty.parquet");
        try (OutputStream out = Files.newOutputStream(file)) {
            new ParquetRows(new OneBlock(), out).finish(Ending.offline(0, 0, 0, Map.of()));
        }
        try (Connection db = DriverManager.getConnection("jdbc:duckdb:"); Statement st = db.createStatement()) {
            assertThat(longs(st, "SELECT count(*) FROM read_parquet('" + file + "')")).containsExactly(0L);
            List<String> columns = new ArrayList<>();
            try (ResultSet rs = st.executeQuery("DESCRIBE SELECT * FROM read_parquet('" + file + "')")) {
                while (rs.next()) columns.add(rs.getString(1) + " " + rs.getString(2));
            }
            assertThat(columns).containsExactly("seq UBIGINT", "kind VARCHAR", "store BOOLEAN", "address UBIGINT",
                    "size UBIGINT", "ip UBIGINT", "instruction VARCHAR", "thread INTEGER", "region VARCHAR", "symbol VARCHAR",
                    "offset UBIGINT", "source VARCHAR", "allocation_stack VARCHAR", "free_stack VARCHAR");
        }
    }

    private static List<Long> longs(Statement st, String sql) throws Exception {
        try (ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            List<Long> values = new ArrayList<>();
            for (int c = 1; c <= rs.getMetaData().getColumnCount(); c++) values.add(rs.getLong(c));
            return values;
        }
    }

    private static List<String> strings(Statement st, String sql) throws Exception {
        List<String> values = new ArrayList<>();
        try (ResultSet rs = st.executeQuery(sql)) {
            while (rs.next()) values.add(rs.getString(1));
        }
        return values;
    }
}
