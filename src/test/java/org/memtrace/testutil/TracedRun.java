package org.memtrace.testutil;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** A program's exit status and standard output, run in a directory, its trace going to a file when asked. */
public record TracedRun(int status, String stdout) {
    /**
     * Runs {@code command} in {@code dir}; with {@code mtr}, a cc-built program writes its trace there with
     * buffers of {@code bufferKb} (small buffers make the full-buffer path run often). Standard error is the test's.
     */
    public static TracedRun run(Path dir, List<String> command, Path mtr, int bufferKb) throws Exception {
        return run(dir, command, mtr, bufferKb, Map.of());
    }

    /** As {@link #run(Path, List, Path, int)}, with {@code environment} added (MEMTRACE_ACCESS_STACKS=1: the probes armed). */
    public static TracedRun run(Path dir, List<String> command, Path mtr, int bufferKb, Map<String, String> environment) throws Exception {
        Path out = Files.createTempFile(dir, "out", ".txt");
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile()).redirectOutput(out.toFile())
                .redirectError(ProcessBuilder.Redirect.INHERIT);
        if (mtr != null) {
            pb.environment().put("MEMTRACE_OUT", mtr.toString());
            pb.environment().put("MEMTRACE_BUFFER_KB", Integer.toString(bufferKb));
        }
        pb.environment().putAll(environment);
        Process p = pb.start();
        if (!p.waitFor(180, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("timed out: " + command);
        }
        return new TracedRun(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
    }
}
