package org.memtrace.testutil;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs the memtrace CLI in a fresh JVM, as a user would, with its own stdin/stdout/stderr. */
public final class Cli {
    private Cli() {}

    public record Result(int status, String stdout, String stderr) {}

    public static Result run(Path workDir, String... args) throws IOException, InterruptedException {
        return runWith(workDir, List.of(), args);
    }

    /** As {@link #run}, the JVM given {@code jvmOptions} too (e.g. -Dmemtrace.lib=DIR: the native files from DIR). */
    public static Result runWith(Path workDir, List<String> jvmOptions, String... args) throws IOException, InterruptedException {
        List<String> command = command(args);
        command.addAll(1, jvmOptions);
        return exec(workDir, command, args);
    }

    /**
     * As {@link #run}, with the address space laid out without randomization ({@code setarch -R}, inherited by the
     * traced program): two runs of one program then see the same layout, where a count that depends on it (the
     * rewriting's int3 places that a layout's stub pages refuse) must be compared between runs.
     */
    public static Result runWithoutAslr(Path workDir, String... args) throws IOException, InterruptedException {
        List<String> command = command(args);
        command.addAll(0, List.of("setarch", "-R"));
        return exec(workDir, command, args);
    }

    private static Result exec(Path workDir, List<String> command, String... args) throws IOException, InterruptedException {
        Path out = Files.createTempFile(workDir, "stdout", ".txt");
        Path err = Files.createTempFile(workDir, "stderr", ".txt");
        Process p = new ProcessBuilder(command).directory(workDir.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        if (!p.waitFor(180, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("memtrace timed out: " + String.join(" ", args) + "\n" + Files.readString(err));
        }
        return new Result(p.exitValue(), Files.readString(out), Files.readString(err));
    }

    /** The command line that runs memtrace with {@code args}, e.g. {@code command("cc")} as a build's CC. */
    public static List<String> command(String... args) {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "--add-opens", "java.base/sun.nio.fs=ALL-UNNAMED", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                "-cp", System.getProperty("java.class.path"), "org.memtrace.cli.Main"));
        cmd.addAll(List.of(args));
        return cmd;
    }

    /** Starts memtrace with its stdout and stderr going to the given files. */
    public static Process start(Path workDir, Path out, Path err, String... args) throws IOException {
        return new ProcessBuilder(command(args)).directory(workDir.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    }
}
