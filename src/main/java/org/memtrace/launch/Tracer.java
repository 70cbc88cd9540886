package org.memtrace.launch;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import org.memtrace.event.Event;
import org.memtrace.event.EventDecoder;
import org.memtrace.event.RingReader;
import org.memtrace.event.StreamFormatException;
import org.memtrace.event.StreamLayout;
import org.memtrace.event.StreamWriter;
import org.memtrace.io.IoReason;
import org.memtrace.trace.EventConsumer;
import org.memtrace.trace.Guarded;

/**
 * Records a program under the fault agent (MadT): runs it with the agent preloaded and feeds its event
 * stream, in order, to the consumer. The calling thread is the ring's only reader: it polls while the
 * program runs, drains the ring once the program has ended, then finishes the consumer. Failures after the start (a broken stream, a consumer error, a full
 * disk) never stop the program: they are reported through {@code problems} and mark the result incomplete.
 */
public final class Tracer implements Recorder {
    // The reader sleeps between polls and takes what accumulated in one batch: waking per event costs the
    // program a futex round trip and a core (the machine may have two). It wakes sooner while the ring
    // fills past a quarter, later (up to MAX_SLEEP_NS) while batches stay small; the agent never waits
    // for it unless the ring is full.
    private static final long MIN_SLEEP_NS = 50_000;
    private static final long MAX_SLEEP_NS = 4_000_000;
    /** The bit of the regions that turns the agent's checks on (memtrace run --check in fault mode). */
    private static final int CHECK_BIT = 0x100;

    /** Where the agent library comes from; tests preload a stand-in. */
    @FunctionalInterface
    interface AgentSource {
        Path path() throws LaunchException;
    }

    private final TraceOptions options;
    private final AgentSource agentSource;
    private final Consumer<String> problems;
    private Guarded consumer;
    private volatile Process process;
    /** When memtrace stops reading the ring, once it was asked to stop; 0 while it was not. */
    private volatile long stopBy;

    private StreamWriter saver;
    private boolean streamBroken;
    private boolean incomplete;
    private boolean attached;
    private Event.Exit lastExit;
    /** run --record-only: the records are saved as they come and not decoded, save the hello and the exit. */
    private boolean recordOnly;
    private long records;
    private final RunState state = new RunState();

    public Tracer(TraceOptions options, Consumer<String> problems) {
        this(options, NativeFiles::agent, problems);
    }

    Tracer(TraceOptions options, AgentSource agentSource, Consumer<String> problems) {
        this.options = options;
        this.agentSource = agentSource;
        this.problems = problems;
    }

    @Override
    public boolean compiledIn() { return false; }

    @Override
    public List<String> ignoredOptions() { return List.of(); }

    @Override
    public RunState state() { return state; }

    @Override
    public String nothingRecorded() {
        return "the agent did not attach, nothing was recorded (a program that clears LD_PRELOAD, or a statically linked one?)";
    }

    @Override
    public String lost(long count) {
        return count + " events were lost: the agent could not hand them to memtrace";
    }

    @Override
    public RunResult run(EventConsumer events) throws LaunchException {
        consumer = new Guarded(events, this::problem, "the program keeps running, the trace stops here");
        return execute();
    }

    /**
     * The ring is drained as in {@link #run} (the agent waits when it is full) and every record goes to the
     * stream file as it is; only the hello (the agent attached) and the exit records (how the program ended)
     * are decoded.
     */
    @Override
    public Recorded record() throws LaunchException {
        if (options.saveStream() == null) throw new IllegalStateException("record() needs the stream file");
        recordOnly = true;
        consumer = new Guarded(event -> {}, this::problem, "the stream file stops here");
        RunResult result = execute();
        long bytes = result.attached() ? fileSize(options.saveStream()) : 0;
        return new Recorded(result, records, bytes, "records");
    }

    private static long fileSize(Path file) {
        try {
            return Files.size(file);
        } catch (IOException e) {
            return 0;
        }
    }

    private RunResult execute() throws LaunchException {
        Target target = Recorder.validate(options);
        Path agent = agentSource.path();
        Checkpoints.mark("agent extracted");
        Path ringFile = createRingFile();
        // run --check: the executable's stack variables and lines from its DWARF, for the agent (CheckFrames)
        Path frames = (options.regions() & CHECK_BIT) != 0 ? CheckFrames.write(target.traced(), ringFile.getParent()) : null;
        try (RingReader ring = RingReader.create(ringFile, (long) options.bufferMb() << 20)) {
            openSaver();
            Checkpoints.mark("ring created");
            Process p = start(agent, ringFile, frames);
            Checkpoints.mark("program started");
            long t0 = System.nanoTime();
            state.started(null);
            consume(ring, p);
            int status = Processes.waitUninterruptibly(p);
            Duration elapsed = Duration.ofNanos(System.nanoTime() - t0);
            state.ended();
            Checkpoints.mark("program ended, ring drained");
            closeSaver(ring);
            consumer.finish();
            Checkpoints.mark("consumers finished");
            // stopped from outside, the program did not run to its end, whether or not all it recorded was read
            return new RunResult(status, Optional.ofNullable(lastExit), ring.lost(), elapsed, attached, incomplete, stopBy != 0);
        } catch (IOException e) {
            throw LaunchException.environment("cannot create the event ring " + ringFile + ": " + e.getMessage(), e);
        } finally {
            Processes.deleteQuietly(ringFile);
            if (frames != null) Processes.deleteQuietly(frames);
        }
    }

    /**
     * Ends the run from outside (memtrace got SIGINT/SIGTERM): gives the program a moment to end on its own
     * (Ctrl-C reached it too), then terminates it. The run's thread drains the ring for a moment more
     * ({@link Processes#STOP_BUDGET_NS}): what the program recorded before it ended is taken in unless the
     * reader falls that far behind, then the rest is left and the trace says it is incomplete.
     */
    @Override
    public void requestStop() {
        stopBy = System.nanoTime() + Processes.STOP_BUDGET_NS;
        Process p = process;
        if (p != null) Processes.stop(p);
    }

    private Process start(Path agent, Path ringFile, Path frames) throws LaunchException {
        ProcessBuilder pb = options.processBuilder();
        var env = pb.environment();
        // The agent puts the program's environment back as it was before main (agent/init.c): each variable
        // memtrace sets is restored from MEMTRACE_<name> when the user had one, removed when not.
        String preload = env.get("LD_PRELOAD");
        // a MEMTRACE_LD_PRELOAD the user's environment holds (a careless or hostile parent's) would be put back as
        // LD_PRELOAD for a program that had none: memtrace's names say only what memtrace saved
        if (preload != null) env.put("MEMTRACE_LD_PRELOAD", preload);
        else env.remove("MEMTRACE_LD_PRELOAD");
        env.put("LD_PRELOAD", preload == null || preload.isBlank() ? agent.toString() : agent + ":" + preload);
        env.put("MEMTRACE_RING", ringFile.toString());
        env.put("MEMTRACE_REGIONS", Integer.toString(options.regions()));
        env.put("MEMTRACE_AUTOSTART", options.autostart() ? "1" : "0");
        env.put("MEMTRACE_STACK_DEPTH", Integer.toString(options.stackDepth()));
        // memtrace's own file or none: never a path the user's environment names (docs/trust.md)
        if (frames != null) env.put("MEMTRACE_CHECK_FRAMES", frames.toString());
        else env.remove("MEMTRACE_CHECK_FRAMES");
        // Resolving every import at start-up keeps the loader's symbol lookups out of the trace; it changes
        // when binding happens, not what the program does. The loader reads it once, before the agent's
        // constructor takes it out again, so libraries opened later bind as the program starts did.
        String bindNow = env.get("LD_BIND_NOW");
        if (bindNow != null) env.put("MEMTRACE_LD_BIND_NOW", bindNow);
        else env.remove("MEMTRACE_LD_BIND_NOW");
        if (!options.lazyBinding()) env.put("LD_BIND_NOW", "1");
        try {
            Process p = InheritedDescriptors.start(pb);
            process = p;
            return p;
        } catch (IOException e) {
            throw LaunchException.environment("cannot start " + options.command().getFirst() + ": " + e.getMessage(), e);
        }
    }

    private void consume(RingReader ring, Process p) {
        long highWater = ring.capacity() / 4;
        long sleep = MIN_SLEEP_NS;
        while (true) {
            long backlog = ring.backlog();
            long deadline = stopBy;
            if (deadline != 0 && System.nanoTime() - deadline > 0 && backlog > 0) {
                ring.discard();
                return;
            }
            if (backlog > 0) {
                pollOnce(ring);
            } else if (!p.isAlive()) {
                // The program is gone, so tail is final: whatever it published is still in the ring.
                state.ended();
                while (pollOnce(ring) > 0) {}
                return;
            }
            sleep = backlog >= highWater ? MIN_SLEEP_NS : Math.min(sleep * 2, MAX_SLEEP_NS);
            LockSupport.parkNanos(sleep);
        }
    }

    private int pollOnce(RingReader ring) {
        if (streamBroken) {
            ring.discard();
            return 0;
        }
        try {
            return ring.poll(this::record);
        } catch (StreamFormatException e) {
            streamBroken = true;
            problem(e.getMessage() + "; the rest of the stream is ignored");
            ring.discard();
            return 0;
        }
    }

    private void record(MemorySegment segment, long offset, int size, long position) {
        if (recordOnly) {
            saveOnly(segment, offset, size, position);
            return;
        }
        save(segment, offset, size);
        // Faults go to the consumer by their fields, other records as events, in the ring's order; the
        // tracer's own interest (hello, exit) is looked at after the consumer had the event, which changes
        // nothing it sees.
        switch (EventDecoder.deliver(segment, offset, position, consumer)) {
            case Event.Hello h -> {
                attached = true;
                Checkpoints.mark("agent attached");
            }
            case Event.Exit x -> lastExit = x;
            case null, default -> {}
        }
    }

    /** The record into the stream file, when there is one; a failed write said once and the file given up. */
    private void save(MemorySegment segment, long offset, int size) {
        if (saver == null) return;
        try {
            saver.write(segment, offset, size);
        } catch (IOException e) {
            problem("cannot save the event stream to " + options.saveStream() + ": " + e.getMessage());
            closeSaverQuietly();
        }
    }

    private void saveOnly(MemorySegment segment, long offset, int size, long position) {
        records++;
        save(segment, offset, size);
        int type = EventDecoder.type(segment, offset);
        if (type == StreamLayout.MT_HELLO) {
            attached = true;
            Checkpoints.mark("agent attached");
        } else if (type == StreamLayout.MT_EXIT && EventDecoder.decode(segment, offset, position) instanceof Event.Exit x) {
            lastExit = x;
        }
    }

    private void openSaver() throws LaunchException {
        if (options.saveStream() == null) return;
        try {
            saver = new StreamWriter(options.saveStream());
        } catch (IOException e) {
            throw LaunchException.usage("cannot write the stream file " + options.saveStream() + ": " + IoReason.of(e));
        }
    }

    private void closeSaver(RingReader ring) {
        if (saver == null) return;
        try {
            saver.finish(ring.lost(), ring.done());
            saver.close();
        } catch (IOException e) {
            problem("cannot save the event stream to " + options.saveStream() + ": " + e.getMessage());
            incomplete = true;
        }
        saver = null;
    }

    private void closeSaverQuietly() {
        try {
            saver.close();
        } catch (IOException ignored) {
            // already reported the first failure
        }
        saver = null;
        incomplete = true;
    }

    private void problem(String message) {
        incomplete = true;
        problems.accept(message);
    }

    /** The ring lives in /dev/shm when possible: a tmpfs keeps the shared pages off the disk. */
    private static Path createRingFile() throws LaunchException {
        Path shm = Path.of("/dev/shm");
        Path dir = Files.isDirectory(shm) && Files.isWritable(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir"));
        try {
            return Files.createTempFile(dir, "memtrace-", ".ring",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } catch (IOException e) {
            throw LaunchException.environment("cannot create the event ring in " + dir + ": " + e.getMessage(), e);
        }
    }
}
