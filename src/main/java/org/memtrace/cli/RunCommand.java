package org.memtrace.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.memtrace.analysis.Analysis;
import org.memtrace.analysis.Interpretation;
import org.memtrace.analysis.Summary;
import org.memtrace.report.Report;
import org.memtrace.rewrite.PlanChoice;
import org.memtrace.rewrite.Probes;
import org.memtrace.event.Event;
import org.memtrace.heap.SymbolicNaming;
import org.memtrace.launch.Checkpoints;
import org.memtrace.launch.InstrumentedRun;
import org.memtrace.launch.LaunchException;
import org.memtrace.launch.Recorder;
import org.memtrace.launch.RunResult;
import org.memtrace.launch.Target;
import org.memtrace.launch.TraceOptions;
import org.memtrace.madt.AddressMode;
import org.memtrace.madt.MadtWriter;
import org.memtrace.rewrite.Selective;
import org.memtrace.trace.InstructionShapes;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code memtrace run}: trace one program with the agent and write the MadT text trace. */
@Command(name = "run", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = {"Runs PROGRAM, its code and its libraries' rewritten in memory (or traced by page faults with --mode fault),"
                + " and writes its data memory accesses as a MadT trace.",
                "A program built with memtrace cc runs as built: its own probes record the accesses.",
                "A #! script is run by its interpreter, and the interpreter is what gets traced."},
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {"the program's:the program's exit status (128+N when signal N killed it)",
                "1:the trace could not be written completely (the program itself succeeded)",
                "2:usage error, or the program cannot be traced (static, setuid, not found)"})
final class RunCommand implements java.util.concurrent.Callable<Integer> {
    /** The longest an interrupted memtrace waits for its trace and summary to be written. */
    private static final int STOP_CAP_SECONDS = 5;

    @Spec CommandLine.Model.CommandSpec spec;

    @Option(names = "--no-demangle", description = "Keep C++ names as the symbol tables spell them (_ZN2ns3Box3putEi), not ns::Box::put(int).")
    boolean noDemangle;

    @Option(names = {"-o", "--output"}, paramLabel = "FILE", defaultValue = "memtrace.out",
            description = "Trace file ('-' for standard output; default: ${DEFAULT-VALUE}).")
    String output;

    @Option(names = "--addresses", paramLabel = "MODE", defaultValue = "symbolic",
            description = "raw (#), symbolic ($) or both lines per event (default: ${DEFAULT-VALUE}).")
    AddressMode addresses;

    @Option(names = "--regions", paramLabel = "LIST", defaultValue = "data,heap,anon,file", split = ",",
            description = "Memory to trace: any of data, heap, anon, file (default: ${DEFAULT-VALUE}).")
    List<String> regions;

    @Option(names = "--no-autostart",
            description = "Record only between memtrace_start() and memtrace_stop() (memtrace.h) instead of from main.")
    boolean noAutostart;

    @Option(names = "--lazy-binding",
            description = "Keep lazy binding of library calls in fault mode (default there: LD_BIND_NOW=1, so the dynamic loader's resolver does not show in the trace; rewrite mode keeps lazy binding and traces the resolver).")
    boolean lazyBinding;

    @Option(names = "--buffer-mb", paramLabel = "MiB", defaultValue = "64",
            description = "Size of the shared event ring, a power of two (default: ${DEFAULT-VALUE}).")
    int bufferMb;

    @Option(names = "--stack-depth", paramLabel = "N", defaultValue = "12",
            description = "Frames per allocation and free stack, 1 to 64 (default: ${DEFAULT-VALUE}, as DHAT's; 1: the caller alone); "
                    + "frames come from each module's .eh_frame, or its frame pointers (docs/stacks.md).")
    int stackDepth;

    @Option(names = "--access-stacks",
            description = "In rewrite mode and for a program built with memtrace cc: also record the callers of each instruction's first 4 "
                    + "executions (to --stack-depth), which costs a trap per trampoline or probe entered (python3's start-up: 3x its CPU; "
                    + "docs/stacks.md). Without it an access shows its instruction alone; allocation and free stacks are recorded either way. "
                    + "Fault mode records every access's stack without it.")
    boolean accessStacks;

    @Option(names = "--save-stream", paramLabel = "FILE", description = "Also save the raw event stream to FILE (the .mtr file for a program built with memtrace cc).")
    Path saveStream;

    @Option(names = "--record-only", paramLabel = "FILE",
            description = "Only record: keep the raw event stream in FILE (as --save-stream does) and decode none of it: no text trace, no summary, "
                    + "one line on what was recorded and how the program ended (incomplete when the recording is cut short); "
                    + "memtrace print, report, cachesim and convert read FILE later. Not with -o FILE, --check, --report, --json-summary.")
    Path recordOnly;

    @Option(names = {"-q", "--quiet"}, description = "Do not print the summary at the end.")
    boolean quiet;

    @Option(names = "--json-summary", paramLabel = "FILE", description = "Also write the summary as JSON to FILE.")
    Path jsonSummary;

    @Option(names = "--report", paramLabel = "FILE", description = "Also write the HTML report (as memtrace report makes it) to FILE.")
    Path reportFile;

    @Option(names = "--mode", paramLabel = "MODE",
            description = "rewrite: the code of the program and of its libraries rewritten in memory before it runs (docs/rewriting.md); "
                    + "fault: page faults (MadT, docs/madt.md). Without --mode: rewrite (--check too), but fault with --regions or --buffer-mb, "
                    + "or when the program cannot be rewritten (said in one line; --check then checks by faults); a program built with memtrace cc "
                    + "records by its own probes.")
    RewriteMode.Mode mode;

    @Option(names = "--omega", paramLabel = "W",
            description = "In rewrite mode (which it implies): trace only the memory instructions the selection of memtrace analyze --omega W "
                    + "chooses per basic block (data, not the stack), W in [0,1] (1: every memory reference; docs/selective-instrumentation.md).")
    String omega;

    @Option(names = "--check",
            description = "Check the heap for memory bugs as memtrace cc --check does (docs/check.md): overflow, use after free, "
                    + "double and invalid free, new/delete mismatch, leaks; reports on standard error, no trace unless -o is given.")
    boolean check;

    @Option(names = "--no-progress",
            description = "No progress line on the terminal's bottom row while the program runs (a program that takes the whole screen).")
    boolean noProgress;

    @Parameters(arity = "1..*", paramLabel = "PROGRAM", description = "The program to trace and its arguments (after --).")
    List<String> command;

    /** The selection of {@code --omega}, or null without it; refused outside rewrite mode. */
    private Selective selective() throws LaunchException {
        if (omega == null) return null;
        if (mode != RewriteMode.Mode.rewrite)
            throw LaunchException.usage("--omega works with --mode rewrite only (a program's own selection: memtrace cc --omega)");
        try {
            return Selective.of(Selective.parse(omega));
        } catch (IllegalArgumentException e) {
            throw LaunchException.usage(e.getMessage());
        }
    }

    /**
     * The mode of a run without {@code --mode}: rewrite mode, which is faster than fault mode on every program
     * measured and traces the stack too (docs/rewriting.md, "The default mode"), except where only fault mode
     * does what was asked: {@code --regions} and {@code --buffer-mb} (fault mode's own), and a program built
     * with memtrace cc (its own probes record, as in fault mode). {@code --omega} is rewrite mode's. So is
     * {@code --check}: counted on the bug corpus, the rewritten checks find every case fault mode finds and more
     * (docs/check.md, "Which mode run --check defaults to"), at a fraction of its cost.
     */
    private RewriteMode.Mode defaultMode(Target target) {
        CommandLine.ParseResult given = spec.commandLine().getParseResult();
        if (omega != null) return RewriteMode.Mode.rewrite;
        boolean faultOnly = given.hasMatchedOption("--regions") || given.hasMatchedOption("--buffer-mb");
        return faultOnly || InstrumentedRun.isInstrumented(target.traced()) ? RewriteMode.Mode.fault : RewriteMode.Mode.rewrite;
    }

    /**
     * The run's options once the mode is known: {@code --check} in fault mode traces the heap alone, with the
     * agent's check bit; in rewrite mode the trampolines check (and record, with -o), and when only checking
     * the tracing runtime applies the plans and records nothing.
     */
    private TraceOptions options(boolean traced) throws LaunchException {
        boolean faultCheck = check && mode != RewriteMode.Mode.rewrite;
        boolean autostart = !noAutostart && !(check && !faultCheck && !traced);
        return new TraceOptions(command, faultCheck ? CHECK_REGIONS : RunValues.regionBits(spec.commandLine(), regions), autostart,
                RunValues.bufferSize(spec.commandLine(), bufferMb),
                recordOnly != null ? recordOnly : saveStream, lazyBinding,
                "-".equals(output), "-".equals(output) ? null : RawPaths.withSuffix(output, ".mtr"), RunValues.stackDepth(stackDepth));
    }

    @Override
    public Integer call() throws LaunchException {
        Checkpoints.mark("command line parsed");
        PrintWriter err = spec.commandLine().getErr();
        command = RawPaths.program(command);
        if (recordOnly != null) RecordOnly.refuse(spec.commandLine().getParseResult(), output);
        // --check: the heap alone is traced (bit 0x100 turns the agent's checks on); the trace is kept only when asked for
        boolean traced = !check || spec.commandLine().getParseResult().hasMatchedOption("-o");
        if (check && !traced) quiet = true;
        if (check) CheckSettings.refuseBad(System.getenv());
        if (check && omega != null)
            throw LaunchException.usage("--omega traces a selection of the accesses and --check checks them all: use one of them");
        // without --mode: chosen from what was asked for and from the program (docs/rewriting.md, "The default mode")
        boolean chosen = mode == null;
        if (chosen) mode = defaultMode(Target.resolve(command.getFirst()));
        Selective selective = selective();
        TraceOptions options = options(traced);
        Target target = Recorder.validate(options);
        if (InstrumentedRun.isChecked(target.traced()))
            throw LaunchException.usage(target.traced() + " was built with memtrace cc --check and checks itself: run it directly "
                    + "(memtrace run cannot trace or check it; build it with memtrace cc to trace it)");
        if (check && mode == RewriteMode.Mode.rewrite && InstrumentedRun.isInstrumented(target.traced()))
            throw LaunchException.usage("--check needs a program memtrace cc did not build (its probes record, they do not check); "
                    + "build it with memtrace cc --check instead");
        // refused outputs cost nothing: before any module is planned
        if (recordOnly != null) RunOutputs.check(target, command.subList(1, command.size()), "-", recordOnly, "--record-only", null, null);
        else RunOutputs.check(target, command.subList(1, command.size()), traced ? output : "-", saveStream, "--save-stream", jsonSummary, reportFile);
        PlanChoice choice = check ? PlanChoice.probing(traced ? Probes.BOTH : Probes.CHECK) : PlanChoice.selecting(selective);
        RewriteMode rewrite = mode != RewriteMode.Mode.rewrite ? null
                : RewriteMode.prepare(target, choice, chosen && selective == null ? p -> say(err, p) : null);
        if (mode == RewriteMode.Mode.rewrite && rewrite == null) {
            // the executable cannot be rewritten: fault mode, with its own checks on (the heap's bit), not none
            mode = RewriteMode.Mode.fault;
            options = options(traced);
        }
        boolean faultCheck = check && mode != RewriteMode.Mode.rewrite;
        if (check && rewrite != null) // a library left as it was: its accesses go unchecked, which the user must hear
            for (String lib : rewrite.unplanned()) say(err, "check: " + lib + ": cannot be rewritten, its own accesses are not checked");
        // chosen once: from here on the run only calls the recorder
        Recorder recorder = rewrite != null ? rewrite.recorder(options, accessStacks, p -> say(err, p)) : Recorder.choose(target, options, p -> say(err, p), accessStacks);
        boolean compiledIn = recorder.compiledIn();
        if (faultCheck && compiledIn)
            throw LaunchException.usage("--check needs a program memtrace cc did not build (its probes record, they do not check); "
                    + "build it with memtrace cc --check instead");
        recorder.ignoredOptions().forEach(p -> say(err, p));
        // fault mode unwinds every fault's callers already (agent/fault.c, send_context): nothing to arm
        if (accessStacks && rewrite == null && !compiledIn)
            say(err, "--access-stacks has no effect in fault mode: it records every access's stack already (to --stack-depth)");
        if (recordOnly != null) {
            try {
                return RecordOnly.run(recorder, recordOnly, quiet, err);
            } finally {
                if (rewrite != null) rewrite.close();
            }
        }
        boolean created = traced && !"-".equals(output) && !Files.exists(RawPaths.path(output));
        CountingOutputStream out = new CountingOutputStream(traced ? RunOutputs.openTrace(output) : OutputStream.nullOutputStream());

        SymbolicNaming names = new SymbolicNaming();
        if (noDemangle) names.addressSpace().keepRawNames();
        names.addressSpace().readDebugInfoAhead();
        // Probes carry their sizes and kinds: a compiled-in run needs no decoder.
        InstructionShapes instructionShapes = compiledIn ? InstructionShapes.UNKNOWN : new BoundLater(names.addressSpace(), err);
        // one stage interprets the run once; the analyses only read its names
        List<Analysis> analyses = new ArrayList<>();
        // a text trace nobody keeps (--check alone, -o /dev/null) is not made: naming every access's source
        // line was most of such a run's reading (the DWARF of libc and ld.so read for it)
        if (traced && !RunOutputs.discarded(output)) analyses.add(new MadtWriter(out, addresses, names, p -> say(err, p)));
        Summary summary = new Summary(compiledIn);
        if (rewrite != null) summary.rewritten(accessStacks);
        else if (compiledIn) summary.accessStacks(accessStacks);
        // the JSON summary and the report are written beside their names and renamed over them once complete:
        // a link planted under a name is replaced, never written through, and a failed run leaves no half file
        OutputFile jsonOutput = jsonSummary == null ? null : OutputFile.create(jsonSummary, List.of());
        analyses.add(summary.printTo(quiet ? null : err).jsonTo(jsonOutput == null ? null : jsonOutput.file(), jsonSummary));
        OutputFile reportOutput = reportFile == null ? null : OutputFile.create(reportFile, List.of());
        if (reportOutput != null) {
            Report htmlReport = new Report(names, compiledIn).writeTo(reportOutput.file(), reportFile, reportFile.toString(), 50, 12)
                    .simulate(ReportCommand.hierarchy(ReportCommand.DEFAULT_CACHES), List.of());
            htmlReport.fact("command", String.join(" ", command));
            analyses.add(htmlReport);
        }
        Interpretation stage = new Interpretation(names, instructionShapes, analyses);
        Checkpoints.mark("decoder and consumers ready");

        RunProgress progress = RunProgress.start(!noProgress, err, recorder.state(), stage::events, out::written);
        CountDownLatch reported = new CountDownLatch(1);
        // On SIGINT/SIGTERM the JVM runs this hook while the run's thread takes in what it can for a moment
        // (Processes.STOP_BUDGET_NS), then writes it marked incomplete and reports: wait for that before
        // letting the JVM go (with status 128+signal). The cap is for a consumer stuck on a slow disk.
        Thread hook = new Thread(() -> {
            recorder.requestStop();
            try {
                reported.await(STOP_CAP_SECONDS, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            progress.close();
        }, "memtrace-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            RunResult result;
            try {
                result = recorder.run(stage);
                progress.close();
            } catch (LaunchException e) {
                progress.close();
                closeQuietly(out);
                if (reportOutput != null) reportOutput.close();
                if (jsonOutput != null) jsonOutput.close();
                // the run was refused after all: a trace file that memtrace created holds nothing, remove it
                if (created) deleteQuietly(RawPaths.path(output));
                throw e;
            }
            try {
                int status = RunEnd.report(err, result, stage, recorder, quiet, output);
                if (rewrite != null && (!quiet || check && RunEnd.checkSummary())) for (String line : rewrite.counts(summary.fallback(), summary.modulePaths(), summary.generatedCode(),
                        result.interrupted() || RunEnd.killedUnrecorded(result) != null)) say(err, line);
                return status;
            } finally {
                if (reportOutput != null) reportOutput.close();
                if (jsonOutput != null) jsonOutput.close();
            }
        } finally {
            progress.close();
            if (rewrite != null) rewrite.close();
            reported.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running; it returns now that the report is out
            }
        }
    }

    private static void closeQuietly(OutputStream out) {
        try {
            out.close();
        } catch (IOException e) {
            // the run was refused: nothing was written that could be lost
        }
    }

    static void say(PrintWriter err, String message) {
        err.println("memtrace: " + Main.oneLine(message));
        err.flush();
    }

    /** The heap, and the agent's check bit (agent/check_run.c). */
    private static final int CHECK_REGIONS = Event.RegionKind.HEAP.bit | 0x100;

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            // an empty trace left behind is all that happens
        }
    }
}
