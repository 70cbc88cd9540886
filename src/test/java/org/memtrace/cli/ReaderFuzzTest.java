package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.event.Event;
import org.memtrace.event.EventSink;
import org.memtrace.event.SavedStream;
import org.memtrace.event.StreamFormatException;
import org.memtrace.mtr.MtrFile;
import org.memtrace.mtr.MtrFormatException;
import org.memtrace.mtr.MtrReader;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;

/**
 * Seeded random damage to real small traces (a .mtr file in the default codec and in the stored one, a
 * saved event stream): bits flipped, the file cut, ranges zeroed. Every reading ends within its time, throws
 * nothing but the readers' own format and I/O exceptions, says the file is damaged, and delivers of each
 * thread's accesses only what the undamaged trace holds in that order (a .mtr file: a prefix per thread, as
 * a damaged chunk ends its thread; a stream: a subsequence, as a damaged block is skipped). Some cases also
 * go through {@code memtrace print} in-process: status 1 and "memtrace: " lines, never an internal error.
 */
class ReaderFuzzTest {
    @TempDir static Path dir;
    static Path mtr, stored, stream;
    static ExecutorService pool = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "fuzz reader");
        t.setDaemon(true);
        return t;
    });

    @BeforeAll
    static void record() throws Exception {
        Files.copy(ReaderFuzzTest.class.getResourceAsStream("/c/user_data.c"), dir.resolve("user_data.c"));
        Cli.Result build = Cli.run(dir, "cc", "-O1", "-pthread", "-o", "prog", "user_data.c");
        assertThat(build.status()).as(build.stderr()).isZero();
        mtr = runCc("codec5.mtr", "5");
        stored = runCc("codec0.mtr", "0");
        Path exe = Gcc.compile(dir, "global_array.c", "global_array", "-g");
        stream = dir.resolve("fault.stream");
        Cli.Result r = Cli.run(dir, "run", "--mode", "fault", "-q", "-o", dir.resolve("fault.trace").toString(), "--save-stream", stream.toString(), "--", exe.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
    }

    @AfterAll
    static void stop() { pool.shutdownNow(); }

    /** The cc-built program run directly, as `memtrace run` would run it: 64 KiB buffers make several chunks a thread. */
    static Path runCc(String name, String codec) throws Exception {
        Path out = dir.resolve(name);
        ProcessBuilder pb = new ProcessBuilder(dir.resolve("prog").toString()).directory(dir.toFile())
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.INHERIT);
        pb.environment().put("MEMTRACE_OUT", out.toString());
        pb.environment().put("MEMTRACE_BUFFER_KB", "64");
        pb.environment().put("MEMTRACE_CODEC", codec);
        Process p = pb.start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).isZero();
        return out;
    }

    /** What a reading delivered: each thread's accesses as tid:address:ip, the other events by kind and thread, and whether damage was said. */
    record Read(Map<Integer, List<String>> accesses, List<String> others, boolean damageSaid) {}

    static Read readMtr(Path file) throws IOException {
        Map<Integer, List<String>> accesses = new HashMap<>();
        List<String> others = new ArrayList<>();
        try (MtrFile f = MtrFile.open(file)) {
            MtrReader.Result r = MtrReader.read(f, e -> collect(e, accesses, others));
            return new Read(accesses, others, !r.complete());
        } catch (MtrFormatException e) {
            assertThat(e.getMessage()).isNotBlank();
            return new Read(accesses, others, true);
        }
    }

    static Read readStream(Path file) throws IOException {
        Map<Integer, List<String>> accesses = new HashMap<>();
        List<String> others = new ArrayList<>();
        try {
            SavedStream.Summary s = SavedStream.replay(file, (EventSink) e -> collect(e, accesses, others), (position, records) -> {});
            return new Read(accesses, others, !s.done() || !s.damage().isEmpty());
        } catch (StreamFormatException e) {
            assertThat(e.getMessage()).isNotBlank();
            return new Read(accesses, others, true);
        }
    }

    static void collect(Event e, Map<Integer, List<String>> accesses, List<String> others) {
        switch (e) {
            case Event.Probe p -> accesses.computeIfAbsent(p.tid(), t -> new ArrayList<>()).add(p.tid() + ":" + p.address() + ":" + p.site().ip());
            case Event.Access a -> accesses.computeIfAbsent(a.tid(), t -> new ArrayList<>()).add(a.tid() + ":" + a.address() + ":" + a.ip());
            // by kind and thread: some events hold arrays, whose toString is their identity
            default -> others.add(e.getClass().getSimpleName() + "/" + e.tid());
        }
    }

    @Test
    void damagedMtrFilesAreReadUpToTheDamageAndSaidToBeDamaged() throws Exception {
        fuzz(mtr, true, 1);
        fuzz(stored, true, 2);
    }

    @Test
    void damagedStreamsAreReadUpToTheDamageAndSaidToBeDamaged() throws Exception {
        fuzz(stream, false, 3);
    }

    private static void fuzz(Path trace, boolean isMtr, long seed) throws Exception {
        byte[] whole = Files.readAllBytes(trace);
        Read reference = read(trace, isMtr);
        assertThat(reference.damageSaid()).as("the undamaged trace is whole").isFalse();
        assertThat(reference.accesses()).isNotEmpty();
        Random random = new Random(seed);
        int damagedCases = 0;
        for (int i = 0; i < 60; i++) {
            byte[] bytes = whole.clone();
            String what;
            switch (i % 3) {
                case 0 -> {
                    int flips = 1 + random.nextInt(4);
                    for (int k = 0; k < flips; k++) bytes[random.nextInt(bytes.length)] ^= (byte) (1 << random.nextInt(8));
                    what = flips + " bits flipped";
                }
                case 1 -> {
                    int length = random.nextInt(bytes.length);
                    bytes = java.util.Arrays.copyOf(bytes, length);
                    what = "cut at " + length;
                }
                default -> {
                    int from = random.nextInt(bytes.length), length = 1 + random.nextInt(Math.min(4096, bytes.length - from));
                    java.util.Arrays.fill(bytes, from, from + length, (byte) 0);
                    what = length + " bytes zeroed at " + from;
                }
            }
            boolean damaged = !java.util.Arrays.equals(bytes, whole);
            if (damaged) damagedCases++;
            Path file = Files.write(dir.resolve("case" + seed + "-" + i + (isMtr ? ".mtr" : ".stream")), bytes);
            Read r = timed(() -> read(file, isMtr), trace.getFileName() + ", " + what);
            String as = trace.getFileName() + " case " + i + ": " + what;
            if (damaged) assertThat(r.damageSaid()).as(as + ": the damage is said").isTrue();
            for (Map.Entry<Integer, List<String>> t : r.accesses().entrySet()) {
                List<String> real = reference.accesses().getOrDefault(t.getKey(), List.of());
                if (isMtr) assertThat(real).as(as + ": thread " + t.getKey() + " is a prefix of the real one").startsWith(t.getValue().toArray(String[]::new));
                else assertThat(isSubsequence(t.getValue(), real)).as(as + ": thread " + t.getKey() + "'s accesses are real ones, in order").isTrue();
            }
            assertThat(reference.others()).as(as + ": every other event is a real one").containsAll(r.others());
            // damage to the first 8 bytes (the magic) leaves a file that is no trace at all: a usage error, 2
            boolean magicKept = bytes.length >= 8 && java.util.Arrays.equals(bytes, 0, 8, whole, 0, 8);
            if (i % 5 == 0) failsInOneLine(file, isMtr, i / 5, !damaged ? 0 : magicKept ? 1 : 2, as);
        }
        assertThat(damagedCases).isGreaterThan(50);
    }

    /**
     * Every command that reads a trace, in turn (the n-th damaged case gets the n-th), each --to of convert
     * included: one command in-process on the damaged file (outputs under fresh names).
     */
    static final List<List<String>> COMMANDS = List.of(List.of("print", "-q", "-o", "OUT"), List.of("cachesim", "--json", "OUT"),
            List.of("report", "-o", "OUT"), List.of("skeleton", "--emit-c", "-o", "OUT"), List.of("convert", "--to", "lackey", "-o", "OUT"),
            List.of("convert", "--to", "pinatrace", "-o", "OUT"), List.of("convert", "--to", "din", "-o", "OUT"),
            List.of("convert", "--to", "xdin", "-o", "OUT"), List.of("convert", "--to", "csv", "-o", "OUT"),
            List.of("convert", "--to", "parquet", "-o", "OUT"), List.of("convert", "--to", "drmemtrace", "-o", "OUT"));

    /**
     * Status 1 for damage (2 for a file no longer recognisable as a trace), every message a "memtrace: " line
     * (print's summary table aside), never an internal error.
     */
    private static void failsInOneLine(Path file, boolean isMtr, int n, int expected, String as) throws Exception {
        List<String> chosen = COMMANDS.get(n % COMMANDS.size());
        // skeleton reads .mtr files only
        List<String> command = !isMtr && chosen.getFirst().equals("skeleton") ? COMMANDS.getFirst() : chosen;
        StringWriter err = new StringWriter();
        Path out = dir.resolve("out-" + file.getFileName() + "-" + n);
        List<String> args = new ArrayList<>(command.stream().map(a -> a.equals("OUT") ? out.toString() : a).toList());
        args.add(file.toString());
        String what = as + " (" + String.join(" ", command) + ")";
        int status = timed(() -> Main.execute(new PrintWriter(new StringWriter()), new PrintWriter(err), args.toArray(String[]::new)), what);
        assertThat(status).as(what + ": " + err).isEqualTo(expected);
        assertThat(err.toString().lines()).as(what).allMatch(l -> l.startsWith("memtrace: ") || command.getFirst().equals("print") && !l.contains("Exception"))
                .noneMatch(l -> l.contains("internal error"));
        if (expected != 0) assertThat(err.toString()).as(what).contains("memtrace: ");
    }

    private static Read read(Path file, boolean isMtr) throws IOException {
        return isMtr ? readMtr(file) : readStream(file);
    }

    interface Reading<T> {
        T read() throws Exception;
    }

    /** Runs one reading on the fuzz thread; a reading that does not end in 20 s is a hang. */
    private static <T> T timed(Reading<T> reading, String as) throws Exception {
        Future<T> f = pool.submit(reading::read);
        try {
            return f.get(20, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            f.cancel(true);
            return fail("reading hangs: " + as);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new AssertionError("reading threw: " + as, e.getCause());
        }
    }

    private static boolean isSubsequence(List<String> part, List<String> whole) {
        int j = 0;
        for (String s : part) {
            while (j < whole.size() && !whole.get(j).equals(s)) j++;
            if (j++ >= whole.size()) return false;
        }
        return true;
    }
}
