package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TraceFile;

/**
 * A rewritten program killed by a fault in one of its moved instructions (docs/rewriting.md, "A crash in a
 * moved instruction"): the kernel's ip lies in trampoline text, and the trace's {@code # fatal signal} line and
 * the run's last line must name the program's instruction, not the trampoline file at a negative offset.
 */
class RewriteCrashTest {
    @TempDir static Path dir;
    static Path prog;

    @BeforeAll
    static void build() throws Exception {
        prog = Gcc.compile(dir, "rw_crash.c", "crash", "-O0", "-g");
    }

    /** Runs the crash program rewritten with {@code args}: killed by SIGSEGV, the output a native run's. */
    private static TraceFile crash(String trace, String... args) throws Exception {
        var r = Cli.run(dir, List.of(List.of("run", "-o", dir.resolve(trace).toString(), "--", prog.toString()), List.of(args))
                .stream().flatMap(List::stream).toArray(String[]::new));
        assertThat(r.status()).as(r.stderr()).isEqualTo(128 + 11);
        assertThat(r.stdout()).isEqualTo("before\n");
        assertThat(r.stderr()).contains("memtrace: rewrite: ", "killed by SIGSEGV (signal 11) at ip 0x");
        return TraceFile.read(dir.resolve(trace));
    }

    @Test
    void aNullLoadInMainIsNamedByItsFunctionOffsetAndLine() throws Exception {
        // main's faulting load, `mov (%rax),%eax` after loading p, as objdump shows it
        String disassembly = Gcc.run(List.of("objdump", "-d", "--no-show-raw-insn", prog.toString()));
        String mainText = disassembly.substring(disassembly.indexOf("<main>:"));
        long main = Long.parseLong(mainText.lines().skip(1).findFirst().orElseThrow().trim().split(":")[0], 16);
        long load = mainText.lines().filter(l -> l.matches("\\s*[0-9a-f]+:\\s+mov\\s+\\(%rax\\),%eax.*")).findFirst()
                .map(l -> Long.parseLong(l.trim().split(":")[0], 16)).orElseThrow();
        TraceFile t = crash("main.trace");
        assertThat(t.comments().getLast()).matches("fatal signal 11 \\(SIGSEGV\\) ip=main\\+" + (load - main)
                + "\\(.*rw_crash\\.c:14\\) addr=0x0 tid=\\d+");
    }

    @Test
    void aNullLoadInLibcIsNamedInLibc() throws Exception {
        TraceFile t = crash("libc.trace", "x");
        String last = t.comments().getLast();
        assertThat(last).startsWith("fatal signal 11 (SIGSEGV) ip=").contains(" addr=0x0 ").doesNotContain(".elf");
        assertThat(last).matches("fatal signal 11 \\(SIGSEGV\\) ip=(__)?strlen.*");
    }
}
