package org.memtrace.launch;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.memtrace.event.StreamLayout;
import org.memtrace.io.IoReason;
import org.memtrace.mtr.MtrFile;
import org.memtrace.trace.EventConsumer;

/**
 * One way of recording a program's accesses: under the fault agent ({@link Tracer}), or through the probes
 * that {@code memtrace cc} compiled into it ({@link InstrumentedRun}); rewritten binaries will be the third.
 * {@code memtrace run} picks one with {@link #choose} when it starts and from then on only calls this
 * interface: every way hands the same events, in stream order, to one consumer, and ends with a
 * {@link RunResult}. Problems after the start never change the program's run: they go to the
 * {@code problems} given at construction and mark the result incomplete.
 */
public sealed interface Recorder permits Tracer, InstrumentedRun {

    /**
     * Checks what can be checked before anything is created or started; {@link #run} does it too. The
     * stream file's directory is checked here so that a bad --save-stream leaves no empty trace behind.
     */
    static Target validate(TraceOptions options) throws LaunchException {
        Target target = Target.resolve(options.command().getFirst());
        Path stream = options.saveStream();
        if (stream != null) {
            if (Files.isDirectory(stream))
                throw LaunchException.usage("cannot write the stream file " + stream + ": it is a directory");
            Path dir = stream.toAbsolutePath().getParent();
            if (dir == null || !Files.isDirectory(dir))
                throw LaunchException.usage("cannot write the stream file " + stream + ": no such directory");
            if (!Files.isWritable(dir))
                throw LaunchException.usage("cannot write the stream file " + stream + ": permission denied");
        }
        return target;
    }

    /**
     * The stream file replaces only an empty file or an earlier recording (a fault-mode stream or a
     * {@code .mtr}, told by their first 8 bytes), and is never written through a link: a user's other file
     * under that name is left as it is (docs/trust.md). Called by the run after its more specific checks of
     * every output (the program itself, the program's arguments).
     */
    public static void refuseNonStream(Path stream) throws LaunchException {
        if (Files.isSymbolicLink(stream))
            throw LaunchException.usage("cannot write the stream file " + stream + ": it is a symbolic link (memtrace writes through none): name the file itself");
        if (!Files.exists(stream, LinkOption.NOFOLLOW_LINKS)) return;
        // a device or a FIFO: the runtime replaces the file it writes (rt_file.c) and memtrace reads it back, so
        // /dev/null named here was once deleted and recreated as a regular file by a run as root
        if (!Files.isRegularFile(stream, LinkOption.NOFOLLOW_LINKS))
            throw LaunchException.usage("cannot write the stream file " + stream + ": it is not a regular file (a device, a FIFO or a directory): name a file");
        try (FileChannel ch = FileChannel.open(stream, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            if (ch.size() == 0) return;
            byte[] head = FileHead.of(ch, Long.BYTES);
            long magic = head.length < Long.BYTES ? 0 : ByteBuffer.wrap(head).order(ByteOrder.LITTLE_ENDIAN).getLong();
            if (magic != StreamLayout.MAGIC && magic != MtrFile.MAGIC)
                throw LaunchException.usage("cannot write the stream file " + stream
                        + ": it exists and is not a recording memtrace saved (it is left as it is): name another file");
        } catch (IOException e) {
            throw LaunchException.usage("cannot write the stream file " + stream + ": " + IoReason.of(e));
        }
    }

    /** The way that records {@code target}: its own probes when memtrace cc built it, else the fault agent. */
    static Recorder choose(Target target, TraceOptions options, Consumer<String> problems, boolean accessStacks) {
        // a memtrace cc build's probes are armed for access stacks only when asked (run --access-stacks), as
        // rewrite mode's trampolines (agent/runtime/rt_ccarm.c; docs/stacks.md)
        return InstrumentedRun.isInstrumented(target.traced())
                ? new InstrumentedRun(options, problems, accessStacks ? Map.of("MEMTRACE_ACCESS_STACKS", "1") : Map.of(), null)
                : new Tracer(options, problems);
    }

    /**
     * Whether the accesses come from probes compiled into the program, each with its size and kind (no
     * decoder is needed to interpret them), rather than from faults at instructions the decoder must read.
     */
    boolean compiledIn();

    /** One sentence per option that this way of recording cannot honour, to be said before the program starts. */
    List<String> ignoredOptions();

    /** Runs the program to its end, handing every recorded event to {@code consumer}, then finishes it. */
    RunResult run(EventConsumer consumer) throws LaunchException;

    /**
     * Runs the program to its end keeping its raw recording in the options' stream file, without decoding
     * its records (run --record-only); the file's structure is checked and any damage or early end is said
     * through the problems, which mark the result incomplete.
     */
    Recorded record() throws LaunchException;

    /** Ends the run from outside (memtrace got SIGINT/SIGTERM); the run's thread still delivers what was recorded. */
    void requestStop();

    /** Why a run whose result is not {@link RunResult#attached} recorded nothing. */
    String nothingRecorded();

    /** The sentence for {@code count} records that were recorded but lost on the way. */
    String lost(long count);

    /** What the run tells about itself while it goes, for a progress line read from another thread. */
    RunState state();
}
