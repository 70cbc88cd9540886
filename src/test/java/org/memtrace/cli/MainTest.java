package org.memtrace.cli;

import static org.assertj.core.api.Assertions.*;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Gcc;

/** Command-line errors: one line starting with "memtrace: ", status 2, nothing started. */
class MainTest {
    @TempDir Path dir;

    record Outcome(int status, String out, String err) {}

    static Outcome memtrace(String... args) {
        var out = new StringWriter();
        var err = new StringWriter();
        int status = Main.execute(new PrintWriter(out), new PrintWriter(err), args);
        return new Outcome(status, out.toString(), err.toString());
    }

    static void assertUsageError(Outcome o, String... fragments) {
        assertThat(o.status()).isEqualTo(2);
        assertThat(o.err().lines().toList()).singleElement().asString().startsWith("memtrace: ").contains(fragments);
        assertThat(o.err()).doesNotContain("Exception", "\tat ");
    }

    @Test
    void unknownOptionAndMissingProgramAreUsageErrors() {
        assertUsageError(memtrace("run", "--bogus", "--", "/bin/true"), "Unknown option: '--bogus'");
        assertUsageError(memtrace("run"), "PROGRAM");
        assertUsageError(memtrace("run", "--"), "PROGRAM");
        assertUsageError(memtrace(), "missing a command");
        assertUsageError(memtrace("frobnicate"), "frobnicate");
    }

    @Test
    void optionValuesAreValidated() {
        assertUsageError(memtrace("run", "--regions", "heap,stack", "--", "/bin/true"), "unknown region 'stack'");
        assertUsageError(memtrace("run", "--buffer-mb", "48", "--", "/bin/true"), "power of two");
        assertUsageError(memtrace("run", "--addresses", "fancy", "--", "/bin/true"), "--addresses");
    }

    @Test
    void untraceableProgramsAreRefusedBeforeAnythingStarts() throws Exception {
        assertUsageError(memtrace("run", "-o", dir.resolve("t").toString(), "--", dir.resolve("missing").toString()), "no such file");
        assertThat(dir.resolve("t")).doesNotExist();
        Path copy = Files.copy(Path.of("/bin/true"), dir.resolve("suid-true"));
        Files.setAttribute(copy, "unix:mode", 04755);
        assertUsageError(memtrace("run", "--", copy.toString()), "setuid");
    }

    @Test
    void staticBinaryIsRefused() throws Exception {
        Assumptions.assumeTrue(Gcc.staticLibcAvailable(), "libc.a (libc6-dev) is not installed");
        Path prog = Gcc.compile(dir, "static_prog.c", "static", "-O1", "-g", "-static");
        assertUsageError(memtrace("run", "--", prog.toString()), "statically linked");
    }

    @Test
    void unwritableOutputIsDetectedBeforeTheProgramStarts() throws Exception {
        Path marker = dir.resolve("ran");
        String[] program = {"/bin/sh", "-c", "touch " + marker};
        assertUsageError(memtrace(concat(new String[] {"run", "-o", dir.resolve("no/such/dir/t.out").toString(), "--"}, program)),
                "cannot write the trace", "no such directory");
        assertUsageError(memtrace(concat(new String[] {"run", "-o", dir.toString(), "--"}, program)), "cannot write the trace");
        assertThat(marker).doesNotExist();
    }

    @Test
    void aNamedCommandIsBuiltAloneWhileHelpAndTyposSeeThemAll() {
        var quiet = new PrintWriter(new StringWriter());
        java.util.Set<String> every = new java.util.HashSet<>();
        for (Class<?> c : Main.COMMANDS) {
            List<String> names = Main.names(c);
            every.addAll(names);
            for (String name : names)
                assertThat(Main.commandLine(quiet, quiet, name).getSubcommands().keySet()).containsExactlyInAnyOrderElementsOf(names);
        }
        assertThat(every).contains("run", "cc", "c++", "report");
        every.add("help"); // `memtrace help COMMAND` needs them all
        for (String first : new String[] {null, "--help", "frobnicate", "-V"})
            assertThat(Main.commandLine(quiet, quiet, first).getSubcommands().keySet()).containsExactlyInAnyOrderElementsOf(every);
    }

    @Test
    void helpAndVersionOnEveryCommand() {
        for (String[] args : new String[][] {{"--help"}, {"run", "--help"}}) {
            Outcome o = memtrace(args);
            assertThat(o.status()).isZero();
            assertThat(o.out()).contains("Usage: memtrace");
        }
        assertThat(memtrace("--version").out()).startsWith("memtrace ");
        assertThat(memtrace("run", "--version").out()).startsWith("memtrace ");
        assertThat(memtrace("analyze", "--version").out()).startsWith("memtrace ");
        assertThat(memtrace("--help").out()).contains("run", "analyze");
    }

    private static String[] concat(String[] a, String[] b) {
        String[] r = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }

    /** The bad command-line battery of docs/trust.md ("Adversarial pass"): what failed it, one line each now. */
    @Test
    void aDirectoryGivenAsTheTraceIsSaidToBeOne() {
        for (String command : List.of("print", "cachesim", "report", "skeleton", "convert")) {
            String[] args = switch (command) {
                case "convert" -> new String[] {command, "--to", "csv", "-o", dir.resolve("c.csv").toString(), dir.toString()};
                case "skeleton" -> new String[] {command, "--emit-c", "-o", dir.resolve("s.c").toString(), dir.toString()};
                default -> new String[] {command, dir.toString()};
            };
            assertUsageError(memtrace(args), dir + " is a directory, not a trace file");
        }
        assertUsageError(memtrace("print", dir.resolve("missing.mtr").toString()), "no trace file " + dir.resolve("missing.mtr"));
    }

    @Test
    void anEmptyFileNameIsRefusedNotTakenForTheWorkingDirectory() throws Exception {
        Path program = Gcc.compile(dir, "global_array.c", "global_array", "-no-pie");
        assertUsageError(memtrace("run", "-o", "", "--", program.toString()), "-o: an empty file name");
        assertUsageError(memtrace("run", "--json-summary=", "--", program.toString()), "'--json-summary': an empty file name");
        assertUsageError(memtrace("report", "-o", "", program.toString()), "'--output': an empty file name");
        assertUsageError(memtrace("print", ""), "(FILE): an empty file name");
    }

    @Test
    void numbersPastWhatCanBeSimulatedOrRecordedAreRefused() {
        // --cores=2147483647 ended the JVM with an OutOfMemoryError and its stack trace
        assertUsageError(memtrace("cachesim", "--cores=2147483647", dir.toString()), "--cores must be 1 to 1024, not 2147483647");
        // --regions=,,, split into no region and recorded nothing, status 0
        assertUsageError(memtrace("run", "--regions=,,,", "--", "/bin/true"), "--regions names no region");
    }
}
