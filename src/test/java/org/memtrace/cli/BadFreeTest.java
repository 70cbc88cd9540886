package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TraceFile;
import org.memtrace.testutil.TraceFile.Line;

/**
 * Issue 23's "bug on the way": under memtrace run a double free exited 0 (the agent's allocator let it
 * pass) where glibc aborts. Frees glibc refuses end the traced program as they end the untraced one (the
 * same message on stderr, SIGABRT), in fault mode (agent/heap.c's allocator) and in a cc build (glibc's,
 * behind the runtime's wrapper), with the bad call in the trace (docs/madt.md, "Frees glibc refuses").
 */
class BadFreeTest {
    @TempDir static Path dir;

    @BeforeAll
    static void build() throws Exception {
        Gcc.compile(dir, "bad_free.c", "bad_free", "-g");
        var cc = Cli.run(dir, "cc", "-O0", "-g", "-o", "bad_free_cc", "bad_free.c");
        assertThat(cc.status()).as(cc.stderr()).isZero();
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @CsvSource({
            "bad_free, double, 24", "bad_free, double, 2000", "bad_free, inside, 24", "bad_free, inside, 300000",
            "bad_free, stack, 24", "bad_free, realloc, 24", "bad_free, realloc, 2000",
            "bad_free_cc, double, 24", "bad_free_cc, inside, 2000"})
    void theProgramAbortsAsUntracedWithTheBadCallRecorded(String program, String how, String size) throws Exception {
        Path prog = dir.resolve(program);
        var plain = new ProcessBuilder(prog.toString(), how, size).directory(dir.toFile())
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        String glibcSaid = new String(plain.getErrorStream().readAllBytes()).strip();
        assertThat(plain.waitFor()).as("untraced").isEqualTo(128 + 6);
        assertThat(glibcSaid).isNotEmpty();

        String trace = program + "-" + how + "-" + size + ".trace";
        var r = Cli.run(dir, "run", "--mode", "fault", "--addresses", "both", "-o", trace, "--", prog.toString(), how, size);
        assertThat(r.status()).as(r.stderr()).isEqualTo(128 + 6);
        assertThat(r.stdout()).startsWith("bad 0x").doesNotContain("survived");
        assertThat(r.stderr()).contains(glibcSaid + "\n").contains("killed by SIGABRT");
        long bad = Long.parseUnsignedLong(r.stdout().strip().substring("bad 0x".length()), 16);
        TraceFile t = TraceFile.read(dir.resolve(trace));
        char call = how.equals("realloc") ? 'R' : 'F';
        List<Line> calls = t.of(call).stream().filter(Line::raw).toList();
        assertThat(calls).as("the bad call, recorded before the abort").isNotEmpty();
        assertThat(calls.getLast().number(call == 'R' ? 2 : 0)).isEqualTo(bad);
        assertThat(t.comments().getLast()).startsWith("fatal signal 6 (SIGABRT)");
    }
}
