package org.memtrace.cli;

import java.util.List;
import java.util.Set;
import org.memtrace.launch.LaunchException;
import org.memtrace.launch.NativeFiles;
import org.memtrace.x86.Decoder;

/**
 * What {@code memtrace run} will need, prepared on another thread while picocli loads its classes and parses
 * the command line (0.3 s that the class-data archive cannot hold; docs/madt.md, "Start-up"), chosen by a
 * glance at the arguments ({@link #guess}). Fault mode needs the agent extracted and Zydis bound (its decoder
 * names each faulting instruction); rewrite mode needs neither on a warm start (its probes carry their sizes
 * and the plans are cached), only its runtime, and binding Zydis for nothing cost it 0.1-0.2 s of CPU. A wrong
 * guess costs time, never a result: the run extracts or binds what it finds missing. Failures are left for the
 * run to meet and report.
 */
final class WarmUp {
    /** The options of {@code memtrace run} that take a value, so that the value is not taken for the program. */
    private static final Set<String> VALUED = Set.of("-o", "--output", "--addresses", "--regions", "--buffer-mb",
            "--stack-depth", "--save-stream", "--json-summary", "--report", "--mode", "--omega");

    /** What the arguments ask for, as far as the warm-up needs to know. */
    record Guess(boolean fault, boolean check) {}

    private WarmUp() {}

    /** Starts the warm-up of {@code memtrace run ARGS} ({@code args[0]} is "run") on a daemon thread. */
    static void start(String[] args) {
        Guess guess = guess(List.of(args).subList(1, args.length));
        Thread.ofPlatform().daemon().name("memtrace-warm-up").start(() -> {
            try {
                if (guess.fault()) {
                    NativeFiles.agent();
                    new Decoder();
                } else {
                    NativeFiles.runtime();
                    if (guess.check()) NativeFiles.checkRuntime();
                }
            } catch (LaunchException | RuntimeException | LinkageError e) {
                // the run meets it again and reports it
            }
        });
    }

    /**
     * The mode {@code run}'s options (up to the program or {@code --}) choose as {@code RunCommand.defaultMode}
     * would without looking at the program: an explicit {@code --mode}; else fault mode for {@code --regions} and
     * {@code --buffer-mb} unless {@code --omega} is given; else rewrite mode, {@code --check} included (a program
     * built with memtrace cc is the guess's miss: it needs neither the agent nor Zydis either).
     */
    static Guess guess(List<String> options) {
        String mode = null;
        boolean faultOnly = false, omega = false, check = false;
        for (int i = 0; i < options.size(); i++) {
            String a = options.get(i);
            if (a.equals("--") || !a.startsWith("-")) break;
            int eq = a.indexOf('=');
            String name = a.startsWith("--") && eq > 0 ? a.substring(0, eq) : a;
            String value = eq > 0 && a.startsWith("--") ? a.substring(eq + 1) : null;
            if (value == null && VALUED.contains(name)) value = i + 1 < options.size() ? options.get(++i) : "";
            switch (name) {
                case "--mode" -> mode = value;
                case "--check" -> check = true;
                case "--regions", "--buffer-mb" -> faultOnly = true;
                case "--omega" -> omega = true;
                default -> { }
            }
        }
        boolean fault = mode != null ? mode.equals("fault") : faultOnly && !omega;
        return new Guess(fault, check);
    }
}
