package org.memtrace.testutil;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Compiles the C fixtures under src/test/resources/c with the system's gcc and runs programs. */
public final class Gcc {

    /** Fixtures that play the agent's part include its public headers. */
    private static final Path AGENT_INCLUDE = Path.of("agent/include").toAbsolutePath();

    private Gcc() {}

    /** Copies a fixture's source into {@code dir} and compiles it with {@code flags}; returns the output file. */
    public static Path compile(Path dir, String source, String output, String... flags) throws IOException, InterruptedException {
        Path src = dir.resolve(source);
        if (!Files.exists(src)) {
            try (InputStream in = Gcc.class.getResourceAsStream("/c/" + source)) {
                if (in == null) throw new IOException("no fixture " + source);
                Files.copy(in, src);
            }
        }
        Path out = dir.resolve(output);
        List<String> command = new ArrayList<>(List.of("gcc", "-O0", "-I" + AGENT_INCLUDE, "-o", out.toString()));
        command.addAll(List.of(flags));
        command.add(src.toString());
        run(command);
        return out;
    }

    /** A stripped copy of {@code file} (no .symtab), as distributions ship binaries. */
    public static Path strip(Path file, String output) throws IOException, InterruptedException {
        Path out = file.resolveSibling(output);
        run(List.of("strip", "-o", out.toString(), file.toString()));
        return out;
    }

    public static boolean staticLibcAvailable() {
        return Files.exists(Path.of("/usr/lib/x86_64-linux-gnu/libc.a"));
    }

    public static String run(List<String> command) throws IOException, InterruptedException {
        return run(command, Map.of());
    }

    /**
     * Runs a command with extra environment variables; returns its stdout and stderr together, and fails
     * with that output when the command exits non-zero or outlives two minutes.
     */
    public static String run(List<String> command, Map<String, String> environment) throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().putAll(environment);
        Process p = builder.start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException(String.join(" ", command) + " timed out: " + output);
        }
        if (p.exitValue() != 0) throw new IOException(String.join(" ", command) + " failed: " + output);
        return output;
    }
}
