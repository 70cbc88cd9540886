package org.memtrace.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import org.memtrace.cc.CcPlan;
import org.memtrace.launch.LaunchException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code memtrace cc} and {@code memtrace c++}: drop-in compiler drivers. They run gcc (g++) with every
 * argument the user gave, plus {@code -wrapper}, so that gcc itself decides what to compile, assemble and
 * link and memtrace only steps in where gcc assembles its own output (docs/compiled-in.md). memtrace's
 * options come first, before the first gcc argument; {@code MEMTRACE_CC_FLAGS} adds more in front. What to
 * run is {@link CcPlan}'s; this is the path without a compile server (the launcher's client tries one first).
 */
@Command(name = "cc", aliases = "c++",
        description = "Compiles like gcc (g++ as 'c++'), inserting memtrace's probes before memory instructions.")
final class CcCommand implements Callable<Integer> {
    @Spec CommandLine.Model.CommandSpec spec;

    @Parameters(arity = "0..*", paramLabel = "ARGS", description = "memtrace options, then gcc's arguments")
    List<String> arguments = new ArrayList<>();

    @Override
    public Integer call() throws LaunchException, IOException {
        PrintWriter err = spec.commandLine().getErr();
        boolean cxx = spec.commandLine().getParseResult().originalArgs().stream().findFirst()
                .map("c++"::equals).orElse(false);
        return switch (CcPlan.of(cxx, arguments, System.getenv())) {
            case CcPlan.Help help -> {
                spec.commandLine().getOut().print(help.text());
                spec.commandLine().getOut().flush();
                yield 0;
            }
            case CcPlan.Refusal refusal -> {
                err.println("memtrace: " + refusal.message());
                err.flush();
                yield Main.USAGE;
            }
            case CcPlan.Compile compile -> compile(compile, err);
        };
    }

    private static int compile(CcPlan.Compile plan, PrintWriter err) throws LaunchException, IOException {
        plan.warnings().forEach(err::println);
        err.flush();
        Path state = Files.createTempDirectory("memtrace-cc-");
        try {
            ProcessBuilder pb = new ProcessBuilder(plan.command()).inheritIO();
            Map<String, String> env = pb.environment();
            env.put("MEMTRACE_CC_STATE", state.toString());
            // no server for the as steps of this build: each runs in a JVM of its own
            env.remove("MEMTRACE_CC_SOCKET");
            plan.environment().forEach((k, v) -> {
                if (v == null) env.remove(k);
                else env.put(k, v);
            });
            Process gcc;
            try {
                gcc = pb.start();
            } catch (IOException e) {
                throw LaunchException.usage("cannot run " + plan.command().getFirst() + ": " + e.getMessage());
            }
            try {
                return gcc.waitFor();
            } catch (InterruptedException e) {
                gcc.destroy();
                Thread.currentThread().interrupt();
                return 130;
            }
        } finally {
            deleteTree(state);
        }
    }

    private static void deleteTree(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException | UncheckedIOException e) {
            // a temporary directory left behind costs nothing but space
        }
    }
}
