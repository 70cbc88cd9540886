package org.memtrace.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;

/**
 * The descriptors memtrace was started with reach the program on their numbers, as the same open file
 * descriptions (docs/trust.md, "Descriptors"): fd 3 a file read past its first 4 bytes, fd 5 a pipe. The
 * shell lists them as the launcher does (scripts/env.sh, memtrace_inherited_fds) and starts memtrace's JVM
 * with them; the program's output and its descriptor listing are compared with a native run's.
 */
class InheritedDescriptorsTest {
    @TempDir static Path dir;
    static Path prog;

    @BeforeAll
    static void build() throws Exception {
        prog = Gcc.compile(dir, "inherit_fds.c", "inherit_fds");
        Files.writeString(dir.resolve("in"), "skipHELLO fd 3\n");
        // what the launcher does before its JVM starts: list the descriptors it was given
        Files.writeString(dir.resolve("launcher.sh"), ". \"$ENV_SH\"\nmemtrace_inherited_fds\nexport MEMTRACE_INHERITED_FDS\nexec \"$@\"\n");
    }

    /** Runs {@code command} through launcher.sh with 3< in at offset 4 and 5> a pipe to cat; returns its standard output. */
    private static List<String> run(String name, List<String> command) throws Exception {
        String script = "exec 3<in; read -r -N 4 skip <&3; bash launcher.sh \"$@\" 5>&1 >" + name + ".fds 2>" + name + ".err | cat >" + name + ".out; exit ${PIPESTATUS[0]}";
        List<String> bash = new ArrayList<>(List.of("bash", "-c", script, "bash"));
        bash.addAll(command);
        ProcessBuilder pb = new ProcessBuilder(bash).directory(dir.toFile()).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        pb.environment().put("ENV_SH", Path.of("scripts/env.sh").toAbsolutePath().toString());
        pb.redirectErrorStream(true).redirectOutput(dir.resolve(name + ".bash").toFile());
        Process p = pb.start();
        assertThat(p.waitFor(180, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(Files.readString(dir.resolve(name + ".err")) + Files.readString(dir.resolve(name + ".bash"))).isZero();
        assertThat(Files.readString(dir.resolve(name + ".out"))).isEqualTo("HELLO fd 3\n");
        return Files.readAllLines(dir.resolve(name + ".fds"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"rewrite", "fault"})
    void theProgramGetsMemtracesDescriptorsAsNativelyWithNothingOfTheJvms(String mode) throws Exception {
        List<String> expected = run("native", List.of(prog.toString()));
        assertThat(expected).containsExactly("offset 4", "0 /dev/null", "1 " + dir.resolve("native.fds"), "2 " + dir.resolve("native.err"),
                "3 " + dir.resolve("in"), "5 pipe");
        List<String> traced = run(mode, Cli.command("run", "--mode", mode, "-o", "/dev/null", "--", prog.toString()));
        List<String> withNames = expected.stream().map(l -> l.replace("native.", mode + ".")).toList();
        if (mode.equals("fault")) {
            assertThat(traced).isEqualTo(withNames);
        } else {
            // the runtime's own trace file (agent/runtime/rt_fd.c): the highest number below 1024, in memtrace's run directory
            assertThat(traced.subList(0, withNames.size())).isEqualTo(withNames);
            assertThat(traced.subList(withNames.size(), traced.size())).singleElement().asString()
                    .matches("1023 /tmp/memtrace-[0-9]+/trace\\.mtr");
        }
    }
}
