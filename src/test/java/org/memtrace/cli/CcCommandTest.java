package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TraceFile;

/** {@code memtrace cc} as a drop-in gcc: what passes through unchanged, what it adds, what it refuses. */
class CcCommandTest {
    @TempDir Path dir;

    /** Exit status, stdout and stderr of a command run in the test directory. */
    record Outcome(int status, String stdout, String stderr) {}

    private Outcome exec(List<String> command, Map<String, String> env) throws IOException, InterruptedException {
        Path out = Files.createTempFile(dir, "out", ".txt"), err = Files.createTempFile(dir, "err", ".txt");
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
                .redirectOutput(out.toFile()).redirectError(err.toFile());
        pb.environment().putAll(env);
        Process p = pb.start();
        if (!p.waitFor(180, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("timed out: " + command);
        }
        return new Outcome(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
    }

    private Outcome exec(List<String> command) throws IOException, InterruptedException {
        return exec(command, Map.of());
    }

    private static List<String> cc(String... args) {
        List<String> c = new ArrayList<>(Cli.command("cc"));
        c.addAll(List.of(args));
        return c;
    }

    private static List<String> list(String... args) {
        return List.of(args);
    }

    @Test
    void aCompileErrorIsGccsByteForByteWithItsStatus() throws Exception {
        Files.writeString(dir.resolve("bad.c"), "int main(void) { return undeclared + ; }\n");
        Outcome gcc = exec(list("gcc", "-c", "bad.c"));
        Outcome mt = exec(cc("-c", "bad.c"));
        assertThat(gcc.status()).isNotZero();
        assertThat(mt.status()).isEqualTo(gcc.status());
        assertThat(mt.stderr()).isEqualTo(gcc.stderr());
        assertThat(mt.stdout()).isEqualTo(gcc.stdout());
    }

    @Test
    void badMemtraceOptionsAreOneLineAndStatusTwo() throws Exception {
        Files.writeString(dir.resolve("ok.c"), "int main(void) { return 0; }\n");
        for (List<String> bad : List.of(cc("--omega"), cc("--omega", "1.5", "ok.c"), cc("--omega", "x", "ok.c"),
                cc("--mode", "fast", "ok.c"), cc("--chunk", "0", "ok.c"), cc("--skeleton", "--omega", "0.5", "ok.c"))) {
            Outcome o = exec(bad);
            assertThat(o.status()).as(String.join(" ", bad)).isEqualTo(2);
            assertThat(o.stderr().strip()).as(String.join(" ", bad)).startsWith("memtrace").doesNotContain("\n").doesNotContain("Exception");
        }
    }

    @Test
    void optionValuesWithBlanksReachTheRewriterWhole() throws Exception {
        Files.writeString(dir.resolve("ok.c"), "int g; int main(void) { return g; }\n");
        Outcome direct = exec(cc("--keep-asm", "kept asm", "-c", "-o", "a.o", "ok.c"));
        assertThat(direct.status()).as(direct.stderr()).isZero();
        assertThat(dir.resolve("kept asm")).isDirectoryContaining("glob:**.s");
        Outcome quoted = exec(cc("-c", "-o", "b.o", "ok.c"), Map.of("MEMTRACE_CC_FLAGS", "--omega 1 --keep-asm 'flags asm'"));
        assertThat(quoted.status()).as(quoted.stderr()).isZero();
        assertThat(dir.resolve("flags asm")).isDirectoryContaining("glob:**.s");
        Outcome bad = exec(cc("-c", "-o", "c.o", "ok.c"), Map.of("MEMTRACE_CC_FLAGS", "--keep-asm 'flags asm"));
        assertThat(bad.status()).isEqualTo(2);
        assertThat(bad.stderr().strip()).isEqualTo("memtrace: cc: MEMTRACE_CC_FLAGS: unterminated ' quote at column 12 of '--keep-asm 'flags asm'");
        assertThat(dir.resolve("c.o")).doesNotExist();
    }

    @Test
    void staticLinkingIsRefused() throws Exception {
        Files.writeString(dir.resolve("ok.c"), "int main(void) { return 0; }\n");
        Outcome o = exec(cc("-static", "-o", "ok", "ok.c"));
        assertThat(o.status()).isEqualTo(2);
        assertThat(o.stderr()).contains("-static").doesNotContain("Exception");
        assertThat(dir.resolve("ok")).doesNotExist();
    }

    @Test
    void helpListsMemtracesOptions() throws Exception {
        Outcome o = exec(cc("--help"));
        assertThat(o.status()).isZero();
        assertThat(o.stdout()).contains("--omega").contains("--chunk").contains("--no-stack").contains("--mode");
    }

    @Test
    void sharedLibraryThreadsAndAHandWrittenAssemblyFileBuildAndRunAsWithGcc() throws Exception {
        Files.writeString(dir.resolve("lib.c"), """
                int scale(int *v, int n, int k) { int s = 0; for (int i = 0; i < n; i++) { v[i] *= k; s += v[i]; } return s; }
                """);
        Files.writeString(dir.resolve("seven.s"), """
                	.text
                	.globl	seven
                	.type	seven, @function
                seven:
                	movl	$7, %eax
                	ret
                	.size	seven, .-seven
                	.section	.note.GNU-stack,"",@progbits
                """);
        Files.writeString(dir.resolve("main.c"), """
                #include <pthread.h>
                #include <stdio.h>
                int scale(int *v, int n, int k);
                int seven(void);
                static int data[2][100];
                static void *work(void *arg) { int *v = arg; for (int i = 0; i < 100; i++) v[i] = i; return (void *) (long) scale(v, 100, seven()); }
                int main(void) {
                    pthread_t t[2];
                    for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, work, data[i]);
                    long total = 0;
                    for (int i = 0; i < 2; i++) { void *r; pthread_join(t[i], &r); total += (long) r; }
                    printf("%ld\\n", total);
                    return 0;
                }
                """);
        Outcome lib = exec(cc("-O2", "-fPIC", "-shared", "-o", "libscale.so", "lib.c"));
        assertThat(lib.status()).as(lib.stderr()).isZero();
        Outcome prog = exec(cc("-O2", "-pthread", "-o", "prog", "main.c", "seven.s", "-L.", "-lscale", "-Wl,-rpath," + dir));
        assertThat(prog.status()).as(prog.stderr()).isZero();
        assertThat(prog.stderr()).contains("seven.s").contains("uninstrumented");
        String expected = String.valueOf(2 * 7 * (99 * 100 / 2));
        assertThat(Gcc.run(List.of(dir.resolve("prog").toString())).strip()).isEqualTo(expected);

        Path trace = dir.resolve("prog.trace");
        var r = Cli.run(dir, "run", "-o", trace.toString(), "--", dir.resolve("prog").toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout().strip()).isEqualTo(expected);
        TraceFile.read(trace); // every line against the grammar
        List<String> stores = Files.readAllLines(trace).stream().filter(l -> l.startsWith("S$") && l.contains("data+")).toList();
        // both threads fill their row in work() and the library's scale() rewrites it (vectorized at -O2, so
        // bytes, not stores, are what is fixed): 2 threads x 100 ints each
        assertThat(bytesStored(stores, ",scale+")).isEqualTo(2 * 100 * 4);
        assertThat(bytesStored(stores, ",work+")).isEqualTo(2 * 100 * 4);
        assertThat(stores.stream().map(l -> l.substring(l.lastIndexOf(',') + 1)).distinct()).as("two threads").hasSize(2);
    }

    @Test
    void threadLocalsOfPositionIndependentCodeLinkIntoAnExecutableInBothTlsDialects() throws Exception {
        Files.writeString(dir.resolve("tls.c"), """
                #include <stdio.h>
                __thread int counter;
                __attribute__((noinline)) int bump(void) { return ++counter; }
                int main(void) { for (int i = 0; i < 3; i++) bump(); printf("%d\\n", counter); return 0; }
                """);
        // the linker relaxes the TLS sequences of -fPIC code in an executable: a probe between the @tlsgd lea
        // and its call broke the link, and a probe on the descriptor call logged a push that never happens
        // (gnu: the counter's load and store and ret's load; gnu2 also loads %fs:0 in the code gcc wrote)
        for (var dialect : List.of(new String[] {"gnu", "6", "3"}, new String[] {"gnu2", "9", "3"})) {
            String prog = "tls_" + dialect[0];
            Outcome built = exec(cc("-O2", "-fPIC", "-mtls-dialect=" + dialect[0], "-o", prog, "tls.c"));
            assertThat(built.status()).as(built.stderr()).isZero();
            Path trace = dir.resolve(prog + ".trace");
            var r = Cli.run(dir, "run", "-o", trace.toString(), "--", dir.resolve(prog).toString());
            assertThat(r.status()).as(r.stderr()).isZero();
            assertThat(r.stdout().strip()).isEqualTo("3");
            var inBump = TraceFile.read(trace).lines().stream()
                    .filter(l -> l.access() && l.field(2).startsWith("bump+")).toList();
            assertThat(inBump.stream().filter(l -> l.type() == 'L')).as(dialect[0]).hasSize(Integer.parseInt(dialect[1]));
            assertThat(inBump.stream().filter(l -> l.type() == 'S')).as(dialect[0]).hasSize(Integer.parseInt(dialect[2]));
        }
    }

    /** Sum of the size field of the store lines whose instruction field contains {@code code}. */
    private static long bytesStored(List<String> stores, String code) {
        return stores.stream().filter(l -> l.contains(code)).map(l -> l.split(","))
                .mapToLong(f -> Long.parseLong(f[3])).sum();
    }

    @Test
    void everyModeKeepsTheProgramsOutputAndExitStatus() throws Exception {
        Files.writeString(dir.resolve("modes.c"), """
                #include <stdio.h>
                #include <stdlib.h>
                #include <string.h>
                static int grid[64][64];
                int main(int argc, char **argv) {
                    int *heap = malloc(4096 * sizeof *heap);
                    for (int i = 0; i < 64; i++)
                        for (int j = 0; j < 64; j++) grid[i][j] = i * j + argc;
                    for (int i = 0; i < 4096; i++) heap[i] = grid[i % 64][i / 64] * 3;
                    char text[64];
                    memcpy(text, "modes", 6);
                    long sum = 0;
                    for (int i = 0; i < 4096; i++) sum += heap[i];
                    printf("%s %ld\\n", text, sum);
                    free(heap);
                    return 3;
                }
                """);
        Path plain = dir.resolve("plain");
        Gcc.run(List.of("gcc", "-O1", "-o", plain.toString(), dir.resolve("modes.c").toString()));
        Outcome expected = exec(list(plain.toString()));
        assertThat(expected.status()).isEqualTo(3);
        List<List<String>> modes = List.of(List.of(), List.of("--no-stack"), List.of("--omega", "0.25"),
                List.of("--omega", "0.1", "--mode", "ma"), List.of("--omega", "0.5", "--mode", "aia"));
        long fullAccesses = 0;
        for (List<String> mode : modes) {
            String name = "m" + modes.indexOf(mode);
            List<String> build = new ArrayList<>(Cli.command("cc"));
            build.addAll(mode);
            build.addAll(List.of("-O1", "-o", name, "modes.c"));
            Outcome built = exec(build);
            assertThat(built.status()).as("%s: %s", mode, built.stderr()).isZero();
            Outcome untraced = exec(list(dir.resolve(name).toString()));
            assertThat(untraced).as("%s without MEMTRACE_OUT", mode).isEqualTo(expected);
            Path mtr = dir.resolve(name + ".mtr");
            Outcome traced = exec(list(dir.resolve(name).toString()), Map.of("MEMTRACE_OUT", mtr.toString()));
            assertThat(traced).as("%s with MEMTRACE_OUT", mode).isEqualTo(expected);
            var printed = Cli.run(dir, "print", "-o", name + ".trace", mtr.toString());
            assertThat(printed.status()).as("%s: %s", mode, printed.stderr()).isZero();
            List<String> lines = Files.readAllLines(dir.resolve(name + ".trace"));
            long heapStores = lines.stream().filter(l -> l.startsWith("S$") && l.contains("<malloc")).count();
            long accesses = lines.stream().filter(l -> l.startsWith("L$") || l.startsWith("S$")).count();
            if (mode.isEmpty()) fullAccesses = accesses;
            if (mode.isEmpty() || mode.equals(List.of("--no-stack")))
                assertThat(heapStores).as("%s: one store per heap element", mode).isEqualTo(4096);
            else
                assertThat(accesses).as("%s: a selective build logs some, not all", mode).isBetween(1L, fullAccesses - 1);
            if (mode.contains("--mode"))
                assertThat(printed.stderr()).as("%s reports its accuracy", mode).contains("accuracy ma").contains("accuracy aia");
        }
    }

    @Test
    void anUnwritableTraceFileStopsTheProgramBeforeItRuns() throws Exception {
        Files.writeString(dir.resolve("hello.c"), "#include <stdio.h>\nint main(void) { puts(\"ran\"); return 0; }\n");
        Outcome built = exec(cc("-o", "hello", "hello.c"));
        assertThat(built.status()).as(built.stderr()).isZero();
        Path bad = dir.resolve("no-such-dir").resolve("hello.mtr");
        Outcome o = exec(list(dir.resolve("hello").toString()), Map.of("MEMTRACE_OUT", bad.toString()));
        assertThat(o.status()).isEqualTo(1);
        assertThat(o.stdout()).as("main never ran").isEmpty();
        assertThat(o.stderr().strip()).startsWith("memtrace: cannot write " + bad).doesNotContain("\n");
        assertThat(bad).doesNotExist();
    }

    @Test
    void theStaticAccuracyOfASelectiveBuildIsWhatAnalyzeReportsForTheSameCode() throws Exception {
        Files.writeString(dir.resolve("sel.c"), """
                #include <stdlib.h>
                int g[64][64];
                int main(int c, char **v) {
                    int *h = malloc(4096 * 4);
                    for (int i = 0; i < 64; i++) for (int j = 0; j < 64; j++) g[i][j] = i * j + c;
                    for (int i = 0; i < 4096; i++) h[i] = g[i % 64][i / 64] * 3;
                    long s = 0;
                    for (int i = 0; i < 4096; i++) s += h[i];
                    free(h);
                    return s & 1;
                }
                """);
        Gcc.run(List.of("gcc", "-O1", "-c", "-o", dir.resolve("sel.o").toString(), dir.resolve("sel.c").toString()));
        var analyzed = Cli.run(dir, "analyze", "--omega", "0.25", "--stack", dir.resolve("sel.o").toString());
        assertThat(analyzed.status()).as(analyzed.stderr()).isZero();
        var ma = java.util.regex.Pattern.compile("MA (\\d\\.\\d+)").matcher(analyzed.stdout());
        assertThat(ma.find()).as(analyzed.stdout()).isTrue();
        double expected = Double.parseDouble(ma.group(1));

        Outcome built = exec(cc("--omega", "0.25", "-O1", "-o", "sel", "sel.c"));
        assertThat(built.status()).as(built.stderr()).isZero();
        Outcome ran = exec(list(dir.resolve("sel").toString()), Map.of("MEMTRACE_OUT", dir.resolve("sel.mtr").toString()));
        assertThat(ran.stderr()).isEmpty();
        var printed = Cli.run(dir, "print", "-o", "sel.trace", "sel.mtr");
        assertThat(printed.status()).as(printed.stderr()).isZero();
        var stat = java.util.regex.Pattern.compile("static ma +(\\d+\\.\\d+) %").matcher(printed.stderr());
        assertThat(stat.find()).as(printed.stderr()).isTrue();
        assertThat(Double.parseDouble(stat.group(1))).isCloseTo(100 * expected, org.assertj.core.data.Offset.offset(0.006));
        assertThat(expected).as("the selection leaves something out").isLessThan(1.0);
    }
}
