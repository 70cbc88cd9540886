package org.memtrace.launch;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.memtrace.event.Event;
import org.memtrace.mtr.MtrFile;
import org.memtrace.mtr.MtrFormatException;
import org.memtrace.mtr.MtrReader;
import org.memtrace.rewrite.FrameTable;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfSection;
import org.memtrace.trace.EventConsumer;
import org.memtrace.trace.Guarded;

/**
 * Records a program built by {@code memtrace cc}: it traces itself through its compiled-in probes and the
 * runtime, so no agent is preloaded. The runtime writes a {@code .mtr} file (MEMTRACE_OUT); once the
 * program has ended, the file is read and its events are handed to the consumer, the same way
 * {@link Tracer} hands over the ring's (access records by their fields, no event object each).
 */
public final class InstrumentedRun implements Recorder {
    private static final String RUNTIME = "libmemtrace-rt.so";
    private static final String CHECK_RUNTIME = "libmemtrace-check.so";
    private static final int DT_NEEDED = 1;

    private final TraceOptions options;
    private final Consumer<String> problems;
    /** Added to the program's environment: the rewrite mode's preloaded runtime and plan (org.memtrace.rewrite). */
    private final Map<String, String> environment;
    /**
     * run --check --mode rewrite: the table of the executable's stack variables for the check runtime
     * (CheckFrames), made when the run starts (a cold plan made it already: one reading of the DWARF); else null.
     */
    private final Supplier<FrameTable> checkFrames;
    private Guarded consumer;
    private volatile Process process;
    /** When memtrace stops reading the trace, once it was asked to stop; 0 while it was not. */
    private volatile long stopBy;
    private boolean incomplete;
    private Event.Exit lastExit;
    /** run --record-only: the end record's count of records and the file's size. */
    private long records, bytes;
    private final RunState state = new RunState();

    public InstrumentedRun(TraceOptions options, Consumer<String> problems) {
        this(options, problems, Map.of(), null);
    }

    /**
     * A run whose program gets {@code environment} on top of its own: the rewrite mode preloads the runtime
     * and names its plan (org.memtrace.rewrite), and records as a memtrace cc program does. With
     * {@code checkFrames} (run --check), the executable's stack variables from its DWARF ({@link FrameTable}) are
     * handed to the check runtime as fault mode hands them to the agent (agent/check/check_stackvars.c, docs/check.md).
     */
    public InstrumentedRun(TraceOptions options, Consumer<String> problems, Map<String, String> environment, Supplier<FrameTable> checkFrames) {
        this.environment = Map.copyOf(environment);
        this.checkFrames = checkFrames;
        this.options = options;
        this.problems = problems;
    }

    @Override
    public boolean compiledIn() { return true; }

    @Override
    public RunState state() { return state; }

    @Override
    public List<String> ignoredOptions() {
        return options.regions() == TraceOptions.ALL_REGIONS ? List.of()
                : List.of("--regions has no effect on a program traced by probes (built with memtrace cc, or --mode rewrite): "
                        + "they trace every instrumented access");
    }

    @Override
    public String nothingRecorded() {
        return "the program wrote no trace (its runtime, libmemtrace-rt.so, did not start or ignored MEMTRACE_OUT)";
    }

    @Override
    public String lost(long count) {
        return count + " records were dropped by the program's runtime";
    }

    /** Whether the binary was built by memtrace cc: it has a site table or needs the runtime. */
    public static boolean isInstrumented(Path program) {
        try {
            ElfFile elf = ElfFile.read(program);
            return elf.section("memtrace_sites").isPresent() || needs(elf, RUNTIME);
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /**
     * Whether memtrace cc --check built the program: it loads the check runtime, whose shadow and allocator a
     * second checker or the tracer cannot share (such a run hung in rewrite mode and failed to map its shadow
     * in fault mode); it checks itself when run directly.
     */
    public static boolean isChecked(Path program) {
        try {
            return needs(ElfFile.read(program), CHECK_RUNTIME);
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    private static boolean needs(ElfFile elf, String library) throws IOException {
        ElfSection dynamic = elf.section(".dynamic").orElse(null);
        if (dynamic == null || dynamic.link() <= 0 || dynamic.link() >= elf.sections().size()) return false;
        byte[] strings = elf.contents(elf.sections().get(dynamic.link()));
        ByteBuffer d = ByteBuffer.wrap(elf.contents(dynamic)).order(ByteOrder.LITTLE_ENDIAN);
        for (int at = 0; at + 16 <= d.limit(); at += 16) {
            if (d.getLong(at) != DT_NEEDED) continue;
            long name = d.getLong(at + 8);
            if (name < 0 || name >= strings.length) continue;
            int end = (int) name;
            while (end < strings.length && strings[end] != 0) end++;
            if (new String(strings, (int) name, end - (int) name, StandardCharsets.UTF_8).equals(library)) return true;
        }
        return false;
    }

    /**
     * Without --save-stream the trace goes to a directory of this run's own (0700), which goes with
     * everything in it however the run ends short of memtrace being killed: the trace, and the traces of
     * the program's fork children ({@code trace.mtr.<pid>}), which the runtime creates O_EXCL beside it.
     */
    @Override
    public RunResult run(EventConsumer events) throws LaunchException {
        consumer = new Guarded(events, this::problem, "the trace stops here");
        return execute(true);
    }

    /**
     * The runtime writes the .mtr file as in {@link #run}, and memtrace only checks its structure once the
     * program has ended: every chunk header and payload against its CRC32C and the end record a clean end
     * writes (MtrFile), with no record decoded. A crash the runtime recorded has its end record, so the exit
     * status alone says how the program ended.
     */
    @Override
    public Recorded record() throws LaunchException {
        if (options.saveStream() == null) throw new IllegalStateException("record() needs the stream file");
        consumer = new Guarded(event -> {}, this::problem, "the stream file stops here");
        RunResult result = execute(false);
        return new Recorded(result, records, bytes, "records");
    }

    private RunResult execute(boolean decode) throws LaunchException {
        Recorder.validate(options);
        boolean keep = options.saveStream() != null;
        // the run's own directory also holds the stack-variable table, when there is one to hand over
        Path scratch = keep && checkFrames == null ? null : temporaryDirectory();
        Path out = keep ? options.saveStream() : scratch.resolve("trace.mtr");
        try {
            // only a regular file (an earlier recording, Recorder.refuseNonStream): never a device node or a link
            if (keep && Files.isRegularFile(out, LinkOption.NOFOLLOW_LINKS)) Files.delete(out);
            Path frames = checkFrames == null ? null : CheckFrames.write(checkFrames.get(), scratch);
            long t0 = System.nanoTime();
            Process p = start(out, frames);
            Checkpoints.mark("program started");
            state.started(out);
            int status = Processes.waitUninterruptibly(p);
            state.ended();
            Checkpoints.mark("program ended");
            Duration elapsed = Duration.ofNanos(System.nanoTime() - t0);
            // stopped: the file is read from now on, for a moment
            if (stopBy != 0) stopBy = System.nanoTime() + Processes.REPLAY_BUDGET_NS;
            // The runtime creates (or truncates) the file and writes its header at once (rt_file.c, open_out): no
            // file means it never started; an empty one, that its first write failed (a full disk: its own line
            // on standard error says why), so the run recorded but nothing of it could be kept.
            boolean created = Files.exists(out);
            boolean wrote = created && Files.size(out) > 0;
            if (created && !wrote)
                problem("nothing of the trace could be written to " + out + " (the line above says why): it is empty and incomplete");
            long lost = !wrote ? 0 : decode ? replay(out) : verify(out);
            Checkpoints.mark("trace read");
            if (stopBy != 0 && wrote && !keep) keepStopped(out);
            consumer.finish();
            return new RunResult(status, Optional.ofNullable(lastExit), lost, elapsed, created, incomplete, stopBy != 0);
        } catch (IOException e) {
            throw LaunchException.environment("cannot prepare the trace file " + out + ": " + e.getMessage(), e);
        } finally {
            if (scratch != null) deleteTree(scratch);
        }
    }

    /**
     * The text trace of a stopped run holds what a moment's reading got; the recording has all the program
     * wrote, so it is kept beside the text trace by a hard link (instant, and link(2) never replaces a file),
     * before the run's directory goes. Where that cannot be (the name exists, another file system, output on
     * standard output), it goes with the directory and the user is told how to keep it next time.
     */
    private void keepStopped(Path recording) {
        Path keep = options.keepStopped();
        if (keep != null) {
            try {
                Files.createLink(keep, recording);
                problems.accept("the program's whole recording is kept in " + keep + " (memtrace print reads it)");
                return;
            } catch (IOException | UnsupportedOperationException e) {
                // said below
            }
        }
        problems.accept("the program's whole recording is not kept; --save-stream FILE keeps it for memtrace print");
    }

    /**
     * Ends the run from outside (memtrace got SIGINT/SIGTERM), as {@link Tracer#requestStop} does: the
     * trace is read for a moment once the program has ended ({@link Processes#REPLAY_BUDGET_NS}), then the rest
     * is left out and the trace says it is incomplete (the .mtr file of --save-stream keeps all the program wrote).
     */
    @Override
    public void requestStop() {
        stopBy = System.nanoTime() + Processes.STOP_BUDGET_NS;
        Process p = process;
        if (p != null) Processes.stop(p);
    }

    private Process start(Path out, Path frames) throws LaunchException {
        ProcessBuilder pb = options.processBuilder();
        pb.environment().put("MEMTRACE_OUT", out.toString());
        pb.environment().put("MEMTRACE_AUTOSTART", options.autostart() ? "1" : "0");
        pb.environment().put("MEMTRACE_STACK_DEPTH", Integer.toString(options.stackDepth()));
        // the runtime dies with this process and removes the three variables before main (agent/runtime/rt_init.c)
        pb.environment().put("MEMTRACE_PARENT", Long.toString(ProcessHandle.current().pid()));
        // the runtime puts MEMTRACE_LD_PRELOAD back as LD_PRELOAD (agent/rewrite/rw_apply.c): only the user's own
        // LD_PRELOAD, saved there by RewriteMode, never a value the user's environment held under that name
        pb.environment().remove("MEMTRACE_LD_PRELOAD");
        pb.environment().putAll(environment);
        // memtrace's own file or none: never a path the user's environment names (docs/trust.md)
        if (frames != null) pb.environment().put("MEMTRACE_CHECK_FRAMES", frames.toString());
        else pb.environment().remove("MEMTRACE_CHECK_FRAMES");
        // the check runtime's report frames (--stack-depth): the runtime removes MEMTRACE_STACK_DEPTH before the
        // check runtime starts, so it gets its own copy, which it takes out of the environment too
        if (frames != null) pb.environment().put("MEMTRACE_CHECK_STACK_DEPTH", Integer.toString(options.stackDepth()));
        else pb.environment().remove("MEMTRACE_CHECK_STACK_DEPTH");
        try {
            Process p = InheritedDescriptors.start(pb);
            process = p;
            return p;
        } catch (IOException e) {
            throw LaunchException.environment("cannot start " + options.command().getFirst() + ": " + e.getMessage(), e);
        }
    }

    /** Hands the file's events to the consumer; returns the records the runtime dropped. */
    private long replay(Path file) {
        try (MtrFile mtr = MtrFile.open(file)) {
            state.reading(mtr.storedBytes());
            MtrReader.Result r = MtrReader.read(mtr, this::dispatch, this::probe, state::read);
            r.problems().forEach(this::problem);
            return r.dropped();
        } catch (Stopped e) {
            return 0;
        } catch (IOException | MtrFormatException e) {
            problem("cannot read the trace the program wrote (" + file + "): " + e.getMessage());
            return 0;
        }
    }

    /** Checks the file's structure and checksums without decoding a record; returns the records the runtime dropped. */
    private long verify(Path file) {
        try (MtrFile mtr = MtrFile.open(file)) {
            bytes = Files.size(file);
            mtr.problem().ifPresent(this::problem);
            mtr.damaged().ifPresent(this::problem);
            records = mtr.end().map(MtrFile.End::records).orElse(0L);
            return mtr.end().map(MtrFile.End::dropped).orElse(0L);
        } catch (IOException | MtrFormatException e) {
            problem("cannot read the trace the program wrote (" + file + "): " + e.getMessage());
            return 0;
        }
    }

    /** Thrown through the reader to end the replay of a run memtrace was asked to stop. */
    private static final class Stopped extends RuntimeException {
        Stopped() { super(null, null, false, false); }
    }

    /** Ends the replay once a stopped run's moment is over: checked per record, a volatile read while not stopped. */
    private void checkStop() {
        long deadline = stopBy;
        if (deadline != 0 && System.nanoTime() - deadline > 0) throw new Stopped();
    }

    private void probe(int tid, long address, Event.ProbeSite site) {
        checkStop();
        consumer.probe(tid, address, site);
    }

    private void dispatch(Event event) {
        checkStop();
        if (event instanceof Event.Exit x) lastExit = x;
        consumer.accept(event);
    }

    private void problem(String message) {
        incomplete = true;
        problems.accept(message);
    }

    private static Path temporaryDirectory() throws LaunchException {
        try {
            return Files.createTempDirectory("memtrace-", PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        } catch (IOException e) {
            throw LaunchException.environment("cannot create a temporary directory for the trace: " + e.getMessage(), e);
        }
    }

    /** The run's own directory, flat: the runtime writes files there, never directories or links. */
    private static void deleteTree(Path dir) {
        try (var files = Files.list(dir)) {
            files.forEach(Processes::deleteQuietly);
        } catch (IOException e) {
            // already gone
        }
        Processes.deleteQuietly(dir);
    }
}
