package org.memtrace.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * The launcher's training run for its class-data archive (the script {@code memtrace}, docs/madt.md
 * "Start-up"): one JVM runs each command once on a tiny program, so that the archive dumped when it exits
 * holds the classes of every command, not only {@code run}'s (an archive trained on {@code run} alone left
 * {@code memtrace print} of a small trace at twice the CPU time). Not a command a user calls.
 *
 * <p>The steps are best effort: a step that fails (no gcc, say) only leaves its classes out of the archive.
 * The exit status is that of the first step, {@code run --mode fault -- /bin/true}, the start-up every user
 * pays, so a training that cannot even do that leaves the launcher's failure marker instead of an archive.
 * Both modes of {@code run} are trained: an archive trained on fault mode alone left rewrite mode's warm
 * start 0.86 s of CPU over fault mode's, as the plan cache's reader, the site tables and the preload's
 * classes were then loaded, linked and interpreted in every run. Rewrite mode runs twice, as the first run
 * may plan the modules (in the user's cache: libc is then planned once per machine either way) and only a
 * warm run takes the path a user's every later run takes.
 *
 * <p>The launcher calls it as {@code java -XX:AOTCacheOutput=A -jar memtrace.jar --start-up-training DIR}
 * (DIR: a scratch directory, removed at the end).
 */
final class StartUpTraining {
    /** The first argument that makes {@link Main#main} train instead of parsing a command line. */
    static final String ARGUMENT = "--start-up-training";

    /**
     * The training's program: besides a heap block and a global, 100,000 reads at pseudo-random places of a
     * 256 KB table and a sweep of stores over it, so that its trace has the varints of every length and the
     * many chunks (with {@link #TRAINING_BUFFER_KB}) of a real one. The JIT's profiles of the training are kept
     * in the cache: trained on 64-element loops alone, the reader's first pass over hash.c's 11 M random
     * accesses ran its decoding at two thirds of the speed of a JVM without the cache's profiles.
     */
    private static final String PROGRAM = """
            #include <stdlib.h>
            static int table[64];
            static unsigned big[1 << 16];
            int main(void) {
                int *block = malloc(64 * sizeof *block);
                for (int i = 0; i < 64; i++) block[i] = table[i] + i;
                long sum = 0;
                for (int i = 0; i < 64; i++) sum += block[i];
                free(block);
                unsigned x = 12345, mix = 0;
                for (int i = 0; i < 100000; i++) {
                    x = x * 1103515245u + 12345u;
                    mix += big[(x >> 8) & 0xffff];
                }
                for (int i = 0; i < (1 << 16); i++) big[i] = mix + i;
                return sum == 2016 ? 0 : 1;
            }
            """;
    /** The runtime's buffer for the training's traces: 64 KB chunks, so that the reader decodes ahead. */
    private static final String TRAINING_BUFFER_KB = "64";

    private StartUpTraining() {
    }

    /** Runs the steps in {@code scratch} and returns the exit status of the first. */
    static int train(Path scratch) throws IOException, InterruptedException {
        Path dir = Files.createDirectories(scratch);
        int status;
        try {
            status = command("run", "--mode", "fault", "-q", "-o", "/dev/null", "--", "/bin/true");
            for (int warm = 0; warm < 2; warm++) command("run", "--mode", "rewrite", "-q", "-o", "/dev/null", "--", "/bin/true");
            Path source = Files.writeString(dir.resolve("t.c"), PROGRAM);
            String program = dir.resolve("t").toString(), trace = dir.resolve("t.mtr").toString();
            if (command("cc", "-O2", "-o", program, source.toString()) == 0 && traced(program, trace)) {
                command("print", "-o", "/dev/null", trace);
                command("report", trace, "-o", dir.resolve("t.html").toString());
                command("cachesim", trace);
                command("convert", trace, "--to", "csv", "-o", dir.resolve("t.csv").toString());
                command("analyze", program);
            }
            // a skeleton trace's replay loads and profiles classes a full trace's print does not (LoopReplay, SkeletonTable)
            String skeleton = dir.resolve("s").toString(), skeletonTrace = dir.resolve("s.mtr").toString();
            if (command("cc", "--skeleton", "-O2", "-o", skeleton, source.toString()) == 0 && traced(skeleton, skeletonTrace))
                command("print", "-o", "/dev/null", skeletonTrace);
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                for (Path p : files.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
            }
        }
        return status;
    }

    private static int command(String... args) {
        PrintWriter discard = new PrintWriter(OutputStream.nullOutputStream(), true);
        return Main.execute(discard, discard, args);
    }

    /** Runs the compiled-in program standalone, as a user would, so that it writes its .mtr file. */
    private static boolean traced(String program, String trace) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(List.of(program)).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD);
        pb.environment().put("MEMTRACE_OUT", trace);
        pb.environment().put("MEMTRACE_BUFFER_KB", TRAINING_BUFFER_KB);
        return pb.start().waitFor() == 0 && Files.isRegularFile(Path.of(trace));
    }
}
