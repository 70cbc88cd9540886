package org.memtrace.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.memtrace.launch.LaunchException;
import org.memtrace.launch.Recorded;
import org.memtrace.launch.Recorder;
import org.memtrace.launch.RunResult;
import picocli.CommandLine;

/**
 * {@code memtrace run --record-only FILE}: the program's raw recording kept in FILE and nothing read from it,
 * as drmemtrace's offline mode records and post-processes later. A whole run's JVM decodes every event
 * (about 100 ns each, more for the text trace: bench/results/run-split.md) even when the user only wants
 * the trace for {@code print}, {@code report}, {@code cachesim} or {@code convert}, which read the file
 * anyway. What needs the events decoded is refused; how the recording ends is still said, from its
 * structure (checksummed blocks or chunks, the end record) and the program's exit status.
 */
final class RecordOnly {
    private RecordOnly() {}

    /** One line for the first option given with --record-only that needs the events decoded, before anything starts. */
    static void refuse(CommandLine.ParseResult given, String output) throws LaunchException {
        if (given.hasMatchedOption("--check"))
            throw LaunchException.usage("--check checks the accesses as they are read and --record-only reads none: use one of them");
        if (given.hasMatchedOption("--report"))
            throw LaunchException.usage("--report needs the events decoded and --record-only decodes none: memtrace report FILE makes it from the recording");
        if (given.hasMatchedOption("--json-summary"))
            throw LaunchException.usage("--json-summary needs the events decoded and --record-only decodes none: memtrace report FILE summarizes the recording");
        if (given.hasMatchedOption("--save-stream"))
            throw LaunchException.usage("--record-only FILE already keeps the stream in FILE: drop --save-stream");
        if (given.hasMatchedOption("-o") && !RunOutputs.discarded(output))
            throw LaunchException.usage("-o " + output + ": --record-only makes no text trace (memtrace print FILE writes it from the recording)");
    }

    /**
     * Runs the program and says in one line what was recorded and how it ended; returns memtrace's exit
     * status as a normal run's: the program's, or 1 when it succeeded and the recording is incomplete.
     */
    static int run(Recorder recorder, Path file, boolean quiet, PrintWriter err) throws LaunchException {
        CountDownLatch reported = new CountDownLatch(1);
        // SIGINT/SIGTERM: as a normal run, the program is stopped and the recording said incomplete before the JVM goes
        Thread hook = new Thread(() -> {
            recorder.requestStop();
            try {
                reported.await(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "memtrace-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            Recorded recorded = recorder.record();
            RunResult result = recorded.result();
            if (!result.attached()) RunCommand.say(err, recorder.nothingRecorded());
            if (result.lost() > 0) RunCommand.say(err, recorder.lost(result.lost()));
            // the fault agent's stream ends with its exit record; a .mtr's end record is the runtime's word that it
            // finished (a crash it caught has one): only without it does the exit status say why the file stops short
            String cutShort = result.interrupted() ? RunEnd.INTERRUPTED
                    : !recorder.compiledIn() || result.incomplete() ? RunEnd.killedUnrecorded(result) : null;
            boolean incomplete = !result.attached() || result.incomplete() || result.lost() > 0 || cutShort != null || result.interrupted();
            if (!quiet || incomplete || result.killedBySignal() || result.executed())
                RunCommand.say(err, line(recorded, file, incomplete, cutShort));
            return result.exitStatus() == 0 && incomplete ? 1 : result.exitStatus();
        } finally {
            reported.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running; it returns now that the line is out
            }
        }
    }

    static String line(Recorded r, Path file, boolean incomplete, String cutShort) {
        String what = incomplete ? "recorded" + (r.records() > 0 ? " " + r.records() + " " + r.unit() + "," : "")
                + " " + r.bytes() + " bytes in " + file + ", incomplete" + (cutShort == null ? " (said above)" : ": " + cutShort)
                : "recorded " + r.records() + " " + r.unit() + ", " + r.bytes() + " bytes in " + file;
        return what + "; " + r.result().describe() + "; memtrace print " + file + " reads it (so do report, cachesim and convert)";
    }
}
