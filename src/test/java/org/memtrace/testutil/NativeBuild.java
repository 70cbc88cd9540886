package org.memtrace.testutil;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Compiles the C sources of src/test/resources/c with gcc for tests that need real programs. */
public final class NativeBuild {
    private NativeBuild() {}

    public static final Path SOURCES = Path.of("src/test/resources/c").toAbsolutePath();
    public static final Path AGENT_INCLUDE = Path.of("agent/include").toAbsolutePath();

    /** Runs gcc with {@code args}, adding the agent's include directory; fails the test with gcc's output. */
    public static Path gcc(Path output, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("gcc", "-O1", "-g", "-I" + AGENT_INCLUDE, "-o", output.toString()));
        for (String a : args) cmd.add(a.endsWith(".c") && !a.contains("/") ? SOURCES.resolve(a).toString() : a);
        Result r = run(cmd);
        if (r.status() != 0) throw new AssertionError("gcc failed: " + String.join(" ", cmd) + "\n" + r.output());
        return output;
    }

    public record Result(int status, String output) {}

    /** Runs a command to completion and returns its status and merged output. */
    public static Result run(List<String> cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("timed out: " + cmd);
        }
        return new Result(p.exitValue(), out);
    }

    public static boolean staticLibcAvailable() {
        return Files.exists(Path.of("/usr/lib/x86_64-linux-gnu/libc.a"));
    }
}
