package org.memtrace.cli;

import java.io.PrintWriter;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.memtrace.analysis.Ending;
import org.memtrace.analysis.Interpretation;
import org.memtrace.event.Signals;
import org.memtrace.launch.Recorder;
import org.memtrace.launch.RunResult;

/** How a traced run ended, as {@code memtrace run} tells it: the notes on standard error and the exit status. */
final class RunEnd {
    static final String INTERRUPTED = "memtrace was interrupted: the program was stopped, and the trace ends there or earlier";

    private RunEnd() {}

    /** The notes on the run, then every analysis's results (the trace closed, the summary, the report). */
    static int report(PrintWriter err, RunResult result, Interpretation stage, Recorder recorder, boolean quiet, String output) {
        if (!result.attached()) RunCommand.say(err, recorder.nothingRecorded());
        if (result.lost() > 0) RunCommand.say(err, recorder.lost(result.lost()));
        String cutShort = result.interrupted() ? INTERRUPTED : killedUnrecorded(result);
        List<String> problems = stage.finish(new Ending(stage.records(), stage.events(), result.lost(), result.elapsed(),
                result.exitStatus(), result.describe(), Map.of(), cutShort));
        problems.forEach(p -> RunCommand.say(err, p));
        if (!quiet || result.killedBySignal() || result.executed()) RunCommand.say(err, result.describe());
        boolean traceWhole = stage.complete();
        if (!quiet && !"-".equals(output) && traceWhole)
            RunCommand.say(err, "trace written to " + RawPaths.path(output) + " (" + stage.events() + " events" + (cutShort == null ? ")" : ", incomplete: " + cutShort + ")"));
        else if (cutShort != null) RunCommand.say(err, "the trace is incomplete: " + cutShort);
        err.flush();
        boolean incomplete = !traceWhole || result.incomplete() || result.interrupted() || !problems.isEmpty();
        return result.exitStatus() == 0 && incomplete ? 1 : result.exitStatus();
    }

    /**
     * Why the trace of a program that left no end record stops short, or null: killed by a signal nothing of
     * it ran to record (SIGKILL), or gone without its runtime finishing (a raw exit system call, seccomp's
     * strict mode). The runtime of rewrite mode and of a compiled-in program writes its buffers only at the
     * end, so what they held is lost; without the mark the trace would look whole.
     */
    static String killedUnrecorded(RunResult result) {
        if (result.exit().isPresent() || !result.attached()) return null;
        if (RunResult.signalStatus(result.exitStatus()))
            return "the program was killed by " + Signals.name(result.exitStatus() - 128)
                    + " before it could record its end: the trace ends there or earlier";
        return result.incomplete()
                ? "the program ended without recording its end (a raw exit system call, its runtime could not finish, or its trace could not be written): the trace ends there or earlier"
                : null;
    }

    /**
     * Whether the user asked for the check summary (MEMTRACE_CHECK has summary): the rewrite's counts go with it.
     * Not for continue alone, whose clean run prints nothing the program did not (docs/check.md).
     */
    static boolean checkSummary() {
        String v = System.getenv("MEMTRACE_CHECK");
        return v != null && Arrays.stream(v.split(",")).anyMatch(w -> w.equals("summary"));
    }
}
