package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.LackeyComparison;

/**
 * Rewrite mode's trace against Valgrind Lackey's, per thread and per instruction (module + offset), libc, ld.so
 * after start-up and the stack included (docs/rewriting.md, "Compared with Lackey"): the bench kernels at small sizes, gzip,
 * sqlite3 and python3 on short inputs. Every instruction both run in the compared window has the same loads
 * and stores (a rep string instruction: the same bytes) and the same ordered accesses; the differences expected
 * by design are excluded by name and counted in the printed row ({@link LackeyComparison.Outcome#row}).
 */
class RewriteLackeyTest {
    @TempDir Path dir;

    /** A bench kernel shrunk by replacing {@code from} with {@code to} in its source (Lackey is 10^4× native). */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "gemm|#define N 256|#define N 24||",
        "hash|600000|3000|3000000|6000",
        "stencil|#define N 512|#define N 40||",
        "chase|#define N (1 << 18)|#define N (1 << 9)||",
        "qsort|#define N (1 << 20)|#define N (1 << 10)||",
        "heap|< 20;|< 3;||",
        "threads|#define N 16384|#define N 512||"})
    void benchKernelsEqualLackeysPerInstruction(String name, String from, String to, String from2, String to2) throws Exception {
        String only = System.getProperty("lackey.only");
        Assumptions.assumeTrue(only == null || List.of(only.split(",")).contains(name), "-Dlackey.only=" + only);
        String source = Files.readString(Path.of("bench/programs", name + ".c")).replace(from, to);
        if (from2 != null) source = source.replace(from2, to2);
        Files.writeString(dir.resolve(name + ".c"), source);
        Path prog = dir.resolve(name);
        Gcc.run(List.of("gcc", "-O2", "-g", "-o", prog.toString(), dir.resolve(name + ".c").toString(), "-lpthread"));
        var o = LackeyComparison.compare(name, dir, List.of(prog.toString()), Map.of(), null);
        // counts equal everywhere; addresses equal in the executable. In libc some differ where heap blocks lie
        // elsewhere relative to each other (threads: the runtime is a TLS module, so each thread's DTV, calloc'ed
        // by pthread_create, is 16 bytes longer; qsort: 2 instructions of memmove, not explained yet)
        print(o);
        assertThat(o.compared()).as("instructions compared").isPositive();
        assertThat(o.differences()).doesNotContainKey("left by the plan, yet recorded");
        // ld.so after start-up is compared (lazy binding of the kernel's libc calls), not excluded
        assertThat(o.ldSoCompared()).as("ld.so's instructions compared").isPositive();
        assertThat(o.excluded().keySet()).noneMatch(k -> k.contains("ld.so"));
        if (name.equals("threads")) {
            // not yet asserted further: in one run of three, a worker's start (start_thread, __ctype_init, its first
            // loop iterations) fell to the other worker's number under Lackey, as if a SCHED line and the trace lines
            // around it came out of order; the rows of the runs are in docs/rewriting.md
            return;
        }
        assertThat(o.unexpected().keySet()).as(String.join("\n", o.examples())).isSubsetOf(Set.of("addresses differ", "counts differ"));
        // threads: libc's switch to multi-threaded mode in the first pthread_create (_IO_enable_locks and the block
        // before it: 4 instructions) runs twice under Valgrind, once rewritten; not explained yet
        assertThat(o.unexpected().getOrDefault("counts differ", 0)).isLessThanOrEqualTo(name.equals("threads") ? 4 : 0);
        assertThat(o.unexpected().getOrDefault("addresses differ", 0)).as("addresses differ").isLessThanOrEqualTo(ADDRESSES.get(name));
        assertThat(o.inExecutable()).as("differences in the executable's instructions").isZero();
    }

    /**
     * The most instructions whose ordered accesses may differ from Lackey's unexpectedly, per program (named through
     * the mappings, InstructionTally; measured: docs/rewriting.md, "Compared with Lackey").
     */
    private static final Map<String, Integer> ADDRESSES = Map.of("gemm", 2, "hash", 2, "stencil", 2, "chase", 2, "qsort", 2, "heap", 2,
            "threads", 60, "gzip -c", 4, "sqlite3", 40, "python3 -S", 300);
    /** python3's bound when no control run fell on Lackey's side of its placement dependence (measured 2,758-2,766). */
    private static final int PYTHON_ONE_WAY = 3_000;

    @Test
    void gzipOfASmallFileEqualsLackeysPerInstruction() throws Exception {
        Path input = dir.resolve("input.txt");
        Files.writeString(input, Files.readString(Path.of("docs/rewriting.md")).substring(0, 6000));
        assertMostlyEqual(LackeyComparison.compare("gzip -c", dir, List.of(which("gzip"), "-c", input.toString()), Map.of(), null));
    }

    @Test
    void sqlite3OnASmallScriptEqualsLackeysPerInstruction() throws Exception {
        Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/sqlite3")),
                "sqlite3 is not installed (apt-get install sqlite3; scripts/env.sh installs it for the tests)");
        Path sql = dir.resolve("s.sql");
        Files.writeString(sql, """
                create table t(k integer primary key, v text);
                insert into t(v) values ('a'), ('bb'), ('ccc'), ('dddd');
                select count(*), sum(length(v)) from t where k > 1;
                """);
        assertMostlyEqual(LackeyComparison.compare("sqlite3", dir, List.of("/usr/bin/sqlite3", ":memory:"), Map.of(), sql));
    }

    @Test
    void python3RunningASmallLoopEqualsLackeysPerInstruction() throws Exception {
        assertMostlyEqual(LackeyComparison.compare("python3 -S", dir,
                List.of("/usr/bin/python3", "-S", "-c", "print(sum(i * i for i in range(50)))"), Map.of("PYTHONHASHSEED", "0"), null));
    }

    private static String which(String program) {
        for (String d : System.getenv("PATH").split(":"))
            if (Files.isExecutable(Path.of(d, program))) return Path.of(d, program).toString();
        throw new IllegalStateException(program + " not on PATH");
    }

    private static void print(LackeyComparison.Outcome o) {
        System.out.println(o.row());
        o.examples().forEach(e -> System.out.println("  " + e));
    }

    /**
     * The system's programs: nothing the plan leaves is recorded, and the loads and stores of all but 2 % of the
     * instructions equal Lackey's but for the expected differences (measured, the PLT swept: gzip 8 of 1,308,
     * sqlite3 28 of 17,542, python3 728 of 47,184). What differs beyond the expected is listed in docs/rewriting.md ("Left").
     */
    private static void assertMostlyEqual(LackeyComparison.Outcome o) {
        print(o);
        assertThat(o.compared()).as("instructions compared").isPositive();
        assertThat(o.ldSoCompared()).as("ld.so's instructions compared").isPositive();
        assertThat(o.differences()).doesNotContainKey("left by the plan, yet recorded");
        long counts = o.unexpected().entrySet().stream().filter(e -> !e.getKey().equals("addresses differ")).mapToLong(Map.Entry::getValue).sum();
        // a program whose work depends on where its memory lies differs from itself between native runs (python3:
        // LackeyComparison.PLACED); that is counted apart, and what is left must be small
        assertThat(counts).as("instructions whose loads and stores differ from Lackey's unexpectedly").isLessThanOrEqualTo(o.compared() / 50);
        // python3 works one of two ways by placement (docs/rewriting.md, "Placement, measured"): Lackey's run and
        // some native ones one way, setarch -R's the other, about 2,800 instructions apart. Unless a control run fell
        // on the other way (and so named them: 2,000 or more placed), the compared run's differences are bounded by that
        int bound = ADDRESSES.get(o.program());
        if (o.program().startsWith("python3") && o.placed() < 2_000) bound = PYTHON_ONE_WAY;
        assertThat(o.unexpected().getOrDefault("addresses differ", 0)).as("instructions whose ordered accesses differ from Lackey's unexpectedly")
                .isLessThanOrEqualTo(bound);
    }
}
