package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TraceFile;

/**
 * Skeleton traces of irregular programs are never larger than full ones (issue 10), on the same program,
 * input and environment: a pointer chase, a hash table and a sort ({@code skel_size.c}), each with a stretch
 * the skeleton computes between stretches it logs, built by {@code memtrace cc} and by {@code memtrace cc
 * --skeleton}. Small buffers make each trace dozens of chunks, so what is tested is that the chunks past the
 * computed stretch are cut where the full trace's are (docs/compiled-in.md, "Chunk boundaries").
 *
 * <p>"The same environment" includes what a trace records of the run: the process id (in every event
 * record) and the program's path. Both runs get process id 1 in a PID namespace of their own ({@code
 * unshare --pid --fork}, which needs root or user namespaces: without it the test is skipped, because the
 * pid alone moves a trace by up to a few hundred bytes either way), a path of the same length, no address
 * randomization and the same link addresses for data ({@link SkeletonTraceTest}). The programs run with an
 * empty environment from a directory whose path has a fixed length, so that the stack, whose addresses are
 * in the records and so decide where chunks end, lies at the same addresses on every machine.
 */
class SkeletonSizeTest {
    @TempDir static Path dir;
    /** Where the programs are built and run: a path of {@link #PATH_LENGTH} characters under {@link #dir}. */
    private static Path base;
    private static final int PATH_LENGTH = 120;
    private static final Map<String, Traced> traces = new HashMap<>();

    private static final Pattern SUMMARY = Pattern.compile("^\\s+(probes|computed)\\s+([\\d,]+)$", Pattern.MULTILINE);

    @BeforeAll
    static void fixture() throws Exception {
        try (InputStream in = SkeletonSizeTest.class.getResourceAsStream("/c/skel_size.c")) {
            Files.copy(in, dir.resolve("skel_size.c"));
        }
        base = fixedLengthDirectory(dir);
    }

    /** A directory under {@code dir} whose path has {@link #PATH_LENGTH} characters, wherever the temporary directory is. */
    static Path fixedLengthDirectory(Path dir) throws Exception {
        Path d = dir.resolve("p".repeat(Math.max(1, PATH_LENGTH - dir.toString().length() - 1)));
        return Files.createDirectories(d);
    }

    /** The command that runs {@code prog} with process id 1 and no address randomization; null without namespaces. */
    static List<String> sameConditions(Path prog, String... args) throws Exception {
        Process p = new ProcessBuilder("unshare", "--pid", "--fork", "true").redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        if (p.waitFor() != 0) return null;
        List<String> command = new ArrayList<>(List.of("unshare", "--pid", "--fork", "setarch", "x86_64", "-R", prog.toString()));
        command.addAll(List.of(args));
        return command;
    }

    private static Path build(String opt, boolean skeleton) throws Exception {
        Path out = base.resolve((skeleton ? "skel" : "full") + opt);
        Path prog = out.resolve("prog");
        if (Files.exists(prog)) return prog;
        Files.createDirectories(out);
        List<String> cc = new ArrayList<>(Cli.command("cc"));
        if (skeleton) cc.add("--skeleton");
        cc.addAll(List.of(opt, "-no-pie", "-Wl,-Tdata=0x10000000", "-Wl,-Trodata-segment=0x8000000", "-o", prog.toString(),
                dir.resolve("skel_size.c").toString()));
        Gcc.run(cc);
        return prog;
    }

    /** One run's trace file, its printed trace in comparable form, and its summary counts. */
    private record Traced(Path mtr, long chunks, List<List<String>> lines, long probes, long computed, String stdout) {}

    private static Traced trace(String opt, boolean skeleton, String kernel) throws Exception {
        String key = opt + skeleton + kernel;
        Traced done = traces.get(key);
        if (done != null) return done;
        Path prog = build(opt, skeleton);
        Path mtr = prog.resolveSibling(kernel + ".mtr");
        List<String> command = sameConditions(Path.of("env"), "-i", "MEMTRACE_OUT=" + mtr, "MEMTRACE_BUFFER_KB=64", prog.toString(), kernel);
        assumeThat(command).as("unshare --pid --fork works here").isNotNull();
        String stdout = Gcc.run(command);
        Path text = prog.resolveSibling(kernel + ".trace");
        var printed = Cli.run(dir, "print", "--addresses", "both", "-o", text.toString(), mtr.toString());
        assertThat(printed.status()).as(printed.stderr()).isZero();
        TraceFile.read(text);
        long probes = 0, computed = 0;
        Matcher m = SUMMARY.matcher(printed.stderr());
        while (m.find()) {
            long v = Long.parseLong(m.group(2).replace(",", ""));
            if (m.group(1).equals("probes")) probes = v;
            else computed = v;
        }
        Traced traced = new Traced(mtr, endRecordChunks(mtr), SkeletonTraceTest.comparable(Files.readAllLines(text)), probes, computed, stdout);
        traces.put(key, traced);
        return traced;
    }

    /**
     * Each chunk's lengths, decoded and stored, in file order: two traces' chunks of the same records have
     * the same (the two builds' site addresses differ, but codec 4 stores their differences).
     */
    private static List<Long> chunkLengths(Path mtr) throws Exception {
        ByteBuffer file = ByteBuffer.wrap(Files.readAllBytes(mtr)).order(ByteOrder.LITTLE_ENDIAN);
        List<Long> lengths = new ArrayList<>();
        for (int at = 64; file.getInt(at) == 0x4b4e4843; ) {
            long stored = file.getInt(at + 16);
            lengths.add((long) file.getInt(at + 20) << 32 | stored);
            at += org.memtrace.mtr.MtrFile.CHUNK_HEADER_SIZE + (int) (stored + 7) / 8 * 8;
        }
        return lengths;
    }

    /** The length of the longest common subsequence of a and b. */
    private static int common(List<Long> a, List<Long> b) {
        int[][] l = new int[a.size() + 1][b.size() + 1];
        for (int i = 1; i <= a.size(); i++)
            for (int j = 1; j <= b.size(); j++)
                l[i][j] = a.get(i - 1).equals(b.get(j - 1)) ? l[i - 1][j - 1] + 1 : Math.max(l[i - 1][j], l[i][j - 1]);
        return l[a.size()][b.size()];
    }

    /** The chunk count the end record states (the last 32 bytes: "EEND", reserved, chunks, records, dropped). */
    private static long endRecordChunks(Path mtr) throws Exception {
        byte[] all = Files.readAllBytes(mtr);
        ByteBuffer end = ByteBuffer.wrap(all, all.length - 32, 32).order(ByteOrder.LITTLE_ENDIAN);
        assertThat(end.getInt()).as("end record magic").isEqualTo(0x444e4545);
        end.getInt();
        return end.getLong();
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"chase,-O2", "hash,-O2", "sort,-O2", "chase,-O1", "hash,-O1", "sort,-O1"})
    void theSkeletonTraceIsLosslessAndNoLargerThanTheFullTrace(String kernel, String opt) throws Exception {
        Traced full = trace(opt, false, kernel);
        Traced skel = trace(opt, true, kernel);
        assertThat(skel.stdout()).isEqualTo(full.stdout()).startsWith(kernel + " ");
        assertThat(full.chunks()).as("full trace chunks").isGreaterThan(20);
        assertThat(skel.computed()).as("computed accesses").isPositive();
        assertThat(skel.probes()).isEqualTo(full.probes());
        assertThat(skel.lines()).hasSameSizeAs(full.lines());
        for (int t = 0; t < full.lines().size(); t++)
            assertThat(skel.lines().get(t)).as("thread group %d", t).containsExactlyElementsOf(full.lines().get(t));
        assertThat(Files.size(skel.mtr())).as("skeleton trace bytes, %s at %s", kernel, opt)
                .isLessThanOrEqualTo(Files.size(full.mtr()));
    }

    /**
     * What a computed stretch changes stays in the chunk around it: past it the skeleton trace is cut into
     * the full trace's chunks, so each of chase's two stretches (the fill of {@code order}, the fill of {@code
     * weights}) leaves one skeleton chunk that is none of the full trace's. When a cut needed a quiet
     * half buffer before it, a cut the full build made just past the first stretch (quiet, counting the
     * stretch's records) was refused by the skeleton build, and the chunks after it then reached a buffer's
     * size at other records: two skeleton chunks differed there, and zstd's noise on each could outweigh
     * what the stretch saved (bench/programs/chase.c: 24 to 40 bytes larger than the full trace).
     */
    @ParameterizedTest(name = "chase {0}")
    @ValueSource(strings = {"-O1", "-O2"})
    void pastEachComputedStretchTheSkeletonTraceHasTheFullTracesChunks(String opt) throws Exception {
        List<Long> full = chunkLengths(trace(opt, false, "chase").mtr());
        List<Long> skel = chunkLengths(trace(opt, true, "chase").mtr());
        assertThat(full).hasSizeGreaterThan(20);
        // the last chunk holds the writer's wait (MT_WRITER: nanoseconds, counts), which no two runs share,
        // so its compressed length is compared by neither
        full = full.subList(0, full.size() - 1);
        skel = skel.subList(0, skel.size() - 1);
        assertThat(skel.size() - common(full, skel)).as("skeleton chunks that are none of the full trace's: %s against %s", skel, full)
                .isLessThanOrEqualTo(2);
    }
}
