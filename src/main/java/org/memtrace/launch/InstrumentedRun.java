package org.memtrace.launch;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import org.memtrace.event.Event;
import org.memtrace.mtr.MtrFile;
import org.memtrace.mtr.MtrFormatException;
import org.memtrace.mtr.MtrReader;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfSection;
import org.memtrace.trace.EventConsumer;
import org.memtrace.trace.Fanout;

/**
 * Runs a program built by {@code memtrace cc}: it traces itself through its compiled-in probes and the
 * runtime, so no agent is preloaded. The runtime writes a {@code .mtr} file (MEMTRACE_OUT); once the
 * program has ended, the file is read and its events are handed to the consumers, the same way
 * {@link Tracer} hands over the ring's. Problems after the start never change the program's run: they are
 * reported through {@code problems} and mark the result incomplete.
 */
public final class InstrumentedRun {
    private static final String RUNTIME = "libmemtrace-rt.so";
    private static final int DT_NEEDED = 1;

    private final TraceOptions options;
    private final Fanout consumers;
    private final Consumer<String> problems;
    /** Added to the program's environment: the rewrite mode's preloaded runtime and plan (org.memtrace.rewrite). */
    private final Map<String, String> environment;
    private volatile Process process;
    private boolean incomplete;
    private Event.Exit lastExit;

    public InstrumentedRun(TraceOptions options, List<EventConsumer> consumers, Consumer<String> problems) {
        this(options, consumers, problems, Map.of());
    }

    /** A run whose program gets {@code environment} on top of its own (the rewrite mode preloads the runtime). */
    public InstrumentedRun(TraceOptions options, List<EventConsumer> consumers, Consumer<String> problems,
                           Map<String, String> environment) {
        this.environment = Map.copyOf(environment);
        this.options = options;
        this.consumers = new Fanout(consumers, this::problem, "the trace stops here");
        this.problems = problems;
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

    public RunResult run() throws LaunchException {
        Tracer.validate(options);
        boolean keep = options.saveStream() != null;
        Path out = keep ? options.saveStream() : temporaryTrace();
        try {
            if (keep) Files.deleteIfExists(out);
            long t0 = System.nanoTime();
            Process p = start(out);
            int status = Processes.waitUninterruptibly(p);
            Duration elapsed = Duration.ofNanos(System.nanoTime() - t0);
            // The runtime creates (or truncates) the file at its first write: an empty file means it never wrote.
            boolean wrote = Files.exists(out) && Files.size(out) > 0;
            long lost = wrote ? replay(out) : 0;
            consumers.finish();
            return new RunResult(status, Optional.ofNullable(lastExit), lost, elapsed, wrote, incomplete);
        } catch (IOException e) {
            throw LaunchException.environment("cannot prepare the trace file " + out + ": " + e.getMessage(), e);
        } finally {
            if (!keep) Processes.deleteQuietly(out);
        }
    }

    /** Ends the run from outside (memtrace got SIGINT/SIGTERM), as {@link Tracer#requestStop} does. */
    public void requestStop() {
        Process p = process;
        if (p != null) Processes.stop(p);
    }

    private Process start(Path out) throws LaunchException {
        ProcessBuilder pb = new ProcessBuilder(options.command()).inheritIO();
        pb.environment().put("MEMTRACE_OUT", out.toString());
        pb.environment().put("MEMTRACE_AUTOSTART", options.autostart() ? "1" : "0");
        pb.environment().putAll(environment);
        try {
            Process p = pb.start();
            process = p;
            return p;
        } catch (IOException e) {
            throw LaunchException.environment("cannot start " + options.command().getFirst() + ": " + e.getMessage(), e);
        }
    }

    /** Hands the file's events to the consumers; returns the records the runtime dropped. */
    private long replay(Path file) {
        try (MtrFile mtr = MtrFile.open(file)) {
            MtrReader.Result r = MtrReader.read(mtr, this::dispatch);
            r.problems().forEach(this::problem);
            return r.dropped();
        } catch (IOException | MtrFormatException e) {
            problem("cannot read the trace the program wrote (" + file + "): " + e.getMessage());
            return 0;
        }
    }

    private void dispatch(Event event) {
        if (event instanceof Event.Exit x) lastExit = x;
        consumers.accept(event);
    }

    private void problem(String message) {
        incomplete = true;
        problems.accept(message);
    }

    private static Path temporaryTrace() throws LaunchException {
        try {
            return Files.createTempFile("memtrace-", ".mtr");
        } catch (IOException e) {
            throw LaunchException.environment("cannot create a temporary trace file: " + e.getMessage(), e);
        }
    }
}
