package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;

/**
 * DynamoRIO's drcachesim, reading {@code memtrace convert --to drmemtrace} as it reads its own offline
 * traces ({@code -indir}), against memtrace's counts of the same trace: its basic_counts tool sees the
 * loads and stores of every thread that memtrace's CSV export has, its cache simulator the L1D hits and
 * misses of {@code memtrace cachesim} on the same geometry, and its invariant checker finds nothing wrong.
 * No Debian package has DynamoRIO and it takes most of an hour to build, so the test does not build it: it
 * runs the launcher named by the system property {@code memtrace.drcachesim} or the environment variable
 * {@code MEMTRACE_DRCACHESIM} (DynamoRIO's {@code clients/bin64/drcachesim}, or the
 * {@code drmemtrace_launcher} target of a build tree), else {@code drcachesim} on the PATH, else it is
 * skipped, saying so.
 */
class DrcachesimComparisonTest {
    @TempDir static Path dir;
    static Path drcachesim, mixStream, mixTrace, threadsStream, threadsTrace;

    @BeforeAll
    static void prepare() throws Exception {
        drcachesim = launcher();
        if (drcachesim == null) {
            System.err.println("DrcachesimComparisonTest skipped: " + UNAVAILABLE);
            return;
        }
        mixStream = record("dinero_mix.c", "mix", "-O1", "-g", "-no-pie");
        threadsStream = record("threads.c", "threads", "-O1", "-g", "-no-pie", "-pthread");
        mixTrace = convert(mixStream, "drmemtrace", "mix.drmemtrace");
        threadsTrace = convert(threadsStream, "drmemtrace", "threads.drmemtrace");
    }

    private static final String UNAVAILABLE = "DynamoRIO's drcachesim is not installed (no Debian package has it); set MEMTRACE_DRCACHESIM"
            + " (or -Dmemtrace.drcachesim) to its launcher, clients/bin64/drcachesim of a DynamoRIO build";

    private static Path launcher() {
        String given = System.getProperty("memtrace.drcachesim", System.getenv("MEMTRACE_DRCACHESIM"));
        if (given != null && !given.isEmpty()) return Files.isExecutable(Path.of(given)) ? Path.of(given) : null;
        for (String p : System.getenv().getOrDefault("PATH", "").split(":")) {
            Path c = Path.of(p.isEmpty() ? "." : p, "drcachesim");
            if (Files.isExecutable(c)) return c;
        }
        return null;
    }

    private static Path record(String source, String name, String... flags) throws Exception {
        Path exe = Gcc.compile(dir, source, name, flags);
        Path stream = dir.resolve(name + ".stream");
        var r = Cli.run(dir, "run", "--mode", "fault", "-q", "-o", dir.resolve(name + ".trace").toString(), "--save-stream", stream.toString(), "--", exe.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        return stream;
    }

    private static Path convert(Path stream, String format, String name) throws Exception {
        Path out = dir.resolve(name);
        var c = Cli.run(dir, "convert", stream.toString(), "--to", format, "-o", out.toString());
        assertThat(c.status()).as(c.stderr()).isZero();
        return out;
    }

    /** Skips the test, saying why, when there is no drcachesim to run. */
    private static void requireDrcachesim() {
        Assumptions.assumeTrue(drcachesim != null, UNAVAILABLE);
    }

    /** drcachesim's report (it prints to standard error), after asserting it succeeded. */
    private static String drcachesim(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(drcachesim.toString()));
        command.addAll(List.of(args));
        Path out = Files.createTempFile(dir, "drcachesim", ".txt");
        ProcessBuilder pb = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectErrorStream(true);
        pb.environment().put("LC_ALL", "C");
        Process p = pb.start();
        assertThat(p.waitFor(300, TimeUnit.SECONDS)).isTrue();
        String text = Files.readString(out);
        assertThat(p.exitValue()).as(text).isZero();
        return text;
    }

    /** The number at the start of the line of {@code text} after {@code after} that ends with {@code what}. */
    private static long count(String text, String after, String what) {
        int from = text.indexOf(after);
        assertThat(from).as(text).isNotNegative();
        for (String line : text.substring(from + after.length()).split("\n")) {
            String s = line.strip();
            if (s.endsWith(what)) return Long.parseLong(s.substring(0, s.length() - what.length()).strip().replace(",", ""));
        }
        throw new AssertionError("no '" + what + "' after '" + after + "' in:\n" + text);
    }

    /** A "Hits:" or "Misses:" row of a cache's block of the cache simulator's report. */
    private static long cacheRow(String text, String cache, String row) {
        int from = text.indexOf("  " + cache + " (");
        assertThat(from).as(text).isNotNegative();
        for (String line : text.substring(from).split("\n")) {
            String s = line.strip();
            if (s.startsWith(row)) return Long.parseLong(s.substring(row.length()).strip().replace(",", ""));
        }
        throw new AssertionError("no '" + row + "' for " + cache + " in:\n" + text);
    }

    /** Loads and stores per thread as memtrace's CSV export has them: one row per load or store. */
    private static Map<Long, long[]> csvCounts(Path stream) throws Exception {
        Path csv = convert(stream, "csv", stream.getFileName() + ".csv");
        List<String> lines = Files.readAllLines(csv);
        List<String> header = List.of(lines.getFirst().split(","));
        int kind = header.indexOf("kind"), thread = header.indexOf("thread");
        Map<Long, long[]> counts = new TreeMap<>();
        for (String line : lines.subList(1, lines.size())) {
            String[] f = line.split(",", -1);
            assertThat(f[kind]).as("the fixture has no block operations").isIn("L", "S");
            counts.computeIfAbsent(Long.parseLong(f[thread]), t -> new long[2])[f[kind].equals("L") ? 0 : 1]++;
        }
        return counts;
    }

    @Test
    void basicCountsSeesEveryThreadsLoadsAndStores() throws Exception {
        requireDrcachesim();
        String out = drcachesim("-indir", threadsTrace.toString(), "-simulator_type", "basic_counts");
        Map<Long, long[]> expected = csvCounts(threadsStream);
        assertThat(expected).hasSize(5);   // main and four workers
        long loads = 0, stores = 0;
        for (var e : expected.entrySet()) {
            String thread = "Thread " + e.getKey() + " counts:";
            assertThat(new long[] {count(out, thread, "data loads"), count(out, thread, "data stores")}).as(out)
                    .containsExactly(e.getValue());
            loads += e.getValue()[0];
            stores += e.getValue()[1];
        }
        assertThat(new long[] {count(out, "Total counts:", "total data loads"), count(out, "Total counts:", "total data stores")})
                .containsExactly(loads, stores);
    }

    /**
     * memtrace cachesim and drcachesim's L1D, one core, LRU, no prefetcher: an access that straddles two
     * lines is two accesses in both, a store allocates in both, and the memcpy's line-sized chunks are the
     * accesses cachesim expands it into, so hits and misses are equal.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource({"8k:4:64, 8192, 4", "32k:8:64, 32768, 8", "1k:1:64, 1024, 1"})
    void theCacheSimulatorsL1dMissesEqualCachesims(String geometry, String size, String assoc) throws Exception {
        requireDrcachesim();
        String out = drcachesim("-indir", mixTrace.toString(), "-simulator_type", "cache", "-cores", "1", "-line_size", "64",
                "-L1D_size", size, "-L1D_assoc", assoc, "-data_prefetcher", "none", "-replace_policy", "LRU");
        Path json = dir.resolve("cachesim-" + size + "-" + assoc + ".json");
        var r = Cli.run(dir, "cachesim", mixStream.toString(), "--l1", geometry, "--policy", "lru", "--json", json.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        JsonNode m = new ObjectMapper().readTree(Files.readString(json)).get("levels").get(0);
        long accesses = m.get("loads").asLong() + m.get("stores").asLong();
        long misses = m.get("loadMisses").asLong() + m.get("storeMisses").asLong();
        assertThat(new long[] {cacheRow(out, "L1D0", "Hits:") + cacheRow(out, "L1D0", "Misses:"), cacheRow(out, "L1D0", "Misses:")})
                .as(out).containsExactly(accesses, misses);
    }

    @Test
    void theInvariantCheckerFindsNothingWrong() throws Exception {
        requireDrcachesim();
        for (Path trace : List.of(mixTrace, threadsTrace)) {
            String out = drcachesim("-indir", trace.toString(), "-simulator_type", "invariant_checker");
            assertThat(out).as(out).doesNotContainIgnoringCase("invariant failure").contains("Trace invariant checks passed");
        }
    }
}
