package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Gcc;

/**
 * The runtime's own mappings (its buffers, codec tables and zstd contexts, its writer thread's stack, the
 * maps reader's buffer) are not the program's: one program traced with codecs whose tables differ in size,
 * and with other buffer sizes, gives the same `memtrace print` summary (memory regions included) and the
 * same `# mapping` lines at start (rt_calls.c, which also maps and dlopens; `setarch -R`, so the program's
 * mappings at start lie at the same addresses in every run).
 */
class CodecSummaryTest {
    private static final Path LIB = Path.of("target/classes/org/memtrace/launch").toAbsolutePath();
    @TempDir static Path dir;
    static Path calls;

    @BeforeAll
    static void build() throws Exception {
        for (String name : List.of("mt_probe.h", "rt_calls.c"))
            try (InputStream in = CodecSummaryTest.class.getResourceAsStream("/c/runtime/" + name)) {
                Files.copy(in, dir.resolve(name));
            }
        calls = dir.resolve("calls");
        Gcc.run(List.of("gcc", "-O0", "-fno-builtin", "-I" + Path.of("agent/include").toAbsolutePath(), "-I" + dir, "-o",
                calls.toString(), dir.resolve("rt_calls.c").toString(), "-L" + LIB, "-Wl,-rpath," + LIB, "-lmemtrace-rt", "-ldl"));
    }

    /** The summary and the trace's mapping lines of one run: {@code memtrace print}'s stderr and stdout. */
    record Printed(String summary, List<String> mappings) {}

    private static Printed traced(int codec, int bufferKb) throws Exception {
        Path mtr = dir.resolve("calls-" + codec + "-" + bufferKb + ".mtr");
        ProcessBuilder pb = new ProcessBuilder("setarch", "x86_64", "-R", calls.toString()).directory(dir.toFile())
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD);
        pb.environment().keySet().removeIf(k -> k.startsWith("MEMTRACE_"));
        pb.environment().put("MEMTRACE_OUT", mtr.toString());
        pb.environment().put("MEMTRACE_CODEC", Integer.toString(codec));
        pb.environment().put("MEMTRACE_BUFFER_KB", Integer.toString(bufferKb));
        Process p = pb.start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        Path text = dir.resolve("calls-" + codec + "-" + bufferKb + ".txt");
        var err = new StringWriter();
        int status = Main.execute(new PrintWriter(new StringWriter()), new PrintWriter(err), "print", "-o", text.toString(), mtr.toString());
        assertThat(status).as(err.toString()).isZero();
        // the writer's wait is the one line that depends on the run's timing; the rest must not differ
        String summary = err.toString().replaceAll("(?m)^  program waited for the writer: .*\n", "");
        // the start-up scan's lines: after it the program's own mmap and libm lie below the runtime's mappings,
        // at addresses that move with their sizes
        List<String> lines = Files.readAllLines(text);
        return new Printed(summary, lines.stream().takeWhile(l -> !l.startsWith("# start ")).filter(l -> l.startsWith("# mapping ")).toList());
    }

    private static int regions(String summary) {
        Matcher m = Pattern.compile("memory regions\\s+([\\d,]+)").matcher(summary);
        assertThat(m.find()).as(summary).isTrue();
        return Integer.parseInt(m.group(1).replace(",", ""));
    }

    @Test
    void codecsAndBufferSizesGiveTheSameSummaryAndMappings() throws Exception {
        Printed seven = traced(7, 1024);
        // codec 5's table is a quarter of codec 7's and it maps no streams; 16 KiB buffers are other mappings again
        for (Printed other : List.of(traced(5, 1024), traced(0, 16), traced(7, 64))) {
            assertThat(other.summary()).isEqualTo(seven.summary());
            assertThat(other.mappings()).isEqualTo(seven.mappings());
        }
        assertThat(regions(seven.summary())).isGreaterThan(seven.mappings().size()); // and the dlopen's libm
    }
}
