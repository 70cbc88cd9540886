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
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import org.memtrace.check.CheckMode;
import org.memtrace.instrument.CcOptions;
import org.memtrace.instrument.OptionWords;
import org.memtrace.launch.LaunchException;
import org.memtrace.launch.NativeFiles;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code memtrace cc} and {@code memtrace c++}: drop-in compiler drivers. They run gcc (g++) with every
 * argument the user gave, plus {@code -wrapper}, so that gcc itself decides what to compile, assemble and
 * link and memtrace only steps in where gcc assembles its own output (docs/compiled-in.md). memtrace's
 * options come first, before the first gcc argument; {@code MEMTRACE_CC_FLAGS} adds more in front.
 */
@Command(name = "cc", aliases = "c++", description = "Compiles like gcc (g++ as 'c++'), inserting memtrace's probes; see --help.")
final class CcCommand implements Callable<Integer> {
    /** Options of gcc that take the next argument as their value: that value is not an input file. */
    private static final Set<String> SEPARATE_VALUE = Set.of("-o", "-I", "-L", "-D", "-U", "-include", "-imacros",
            "-isystem", "-idirafter", "-iprefix", "-iwithprefix", "-iquote", "-isysroot", "-x", "-MF", "-MT", "-MQ",
            "-Xlinker", "-Xassembler", "-Xpreprocessor", "-T", "-u", "-e", "-z", "-aux-info", "--param", "-dumpbase",
            "-dumpdir", "-dumpbase-ext", "-wrapper", "-B", "-specs");
    /** gcc stops before linking with any of these. */
    private static final Set<String> NO_LINK = Set.of("-c", "-S", "-E", "-M", "-MM", "-fsyntax-only");

    @Spec CommandLine.Model.CommandSpec spec;

    @Parameters(arity = "0..*", paramLabel = "ARGS", description = "memtrace options, then gcc's arguments")
    List<String> arguments = new ArrayList<>();

    @Override
    public Integer call() throws LaunchException, IOException {
        PrintWriter err = spec.commandLine().getErr();
        boolean cxx = spec.commandLine().getParseResult().originalArgs().stream().findFirst()
                .map("c++"::equals).orElse(false);
        List<String> all = new ArrayList<>();
        try {
            all.addAll(OptionWords.split(System.getenv("MEMTRACE_CC_FLAGS")));
        } catch (IllegalArgumentException e) {
            throw LaunchException.usage("cc: MEMTRACE_CC_FLAGS: " + e.getMessage());
        }
        all.addAll(arguments);
        if (!all.isEmpty() && (all.getFirst().equals("--help") || all.getFirst().equals("-h"))) {
            spec.commandLine().getOut().print(help(cxx));
            spec.commandLine().getOut().flush();
            return 0;
        }
        CheckMode check = CheckMode.split(all);
        CcOptions.Split parsed;
        try {
            parsed = CcOptions.split(check.rest());
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        List<String> gccArgs = compilerArguments(parsed.rest(), err);
        if (check.on() && parsed.options().skeleton()) throw LaunchException.usage("cc: --check cannot be combined with --skeleton");
        if (check.on() && CheckMode.conflict(gccArgs) != null) throw LaunchException.usage("cc: " + CheckMode.conflict(gccArgs));
        String compiler = System.getenv().getOrDefault(cxx ? "MEMTRACE_CXX" : "MEMTRACE_GCC", cxx ? "g++" : "gcc");
        List<String> command = new ArrayList<>(List.of(compiler, "-wrapper", NativeFiles.ccWrapper().toString()));
        command.addAll(gccArgs);
        if (links(gccArgs) && check.on()) {
            Path runtime = NativeFiles.checkRuntime().getParent();
            command.addAll(List.of("-L" + runtime, "-Wl,-rpath," + runtime, "-Wl,--push-state,--no-as-needed",
                    "-lmemtrace-check", "-Wl,--pop-state"));
        } else if (links(gccArgs)) {
            Path runtime = NativeFiles.runtime().getParent();
            // --no-as-needed: a program whose every probe was left out still records its allocations
            command.addAll(List.of("-L" + runtime, "-Wl,-rpath," + runtime, "-Wl,--push-state,--no-as-needed",
                    "-lmemtrace-rt", "-Wl,--pop-state"));
            // the build-id is the checksum that ties a trace to the skeleton it is replayed from; after the
            // user's arguments, so that a --build-id=none among them does not leave the program without one
            if (parsed.options().skeleton()) command.add("-Wl,--build-id=sha1");
        }
        Path state = Files.createTempDirectory("memtrace-cc-");
        try {
            ProcessBuilder pb = new ProcessBuilder(command).inheritIO();
            Map<String, String> env = pb.environment();
            env.put("MEMTRACE_CC_STATE", state.toString());
            env.put("MEMTRACE_CC_OPTIONS", OptionWords.join(parsed.optionWords()));
            if (check.on()) env.put("MEMTRACE_CC_CHECK", check.mode());
            else env.remove("MEMTRACE_CC_CHECK");
            // objects compiled on a -shared command line go into a shared library, whatever cc1 was told
            if (gccArgs.contains("-shared")) env.put("MEMTRACE_CC_SHARED", "1");
            else env.remove("MEMTRACE_CC_SHARED");
            env.put("MEMTRACE_JAVA", Path.of(System.getProperty("java.home"), "bin", "java").toString());
            env.put("MEMTRACE_CLASSPATH", System.getProperty("java.class.path"));
            env.put("MEMTRACE_JAVA_OPTIONS", "--enable-native-access=ALL-UNNAMED -XX:+UseSerialGC -XX:TieredStopAtLevel=1 "
                    + "-Xshare:auto -Xlog:disable -Xlog:all=off");
            Process gcc;
            try {
                gcc = pb.start();
            } catch (IOException e) {
                throw LaunchException.usage("cannot run " + compiler + ": " + e.getMessage());
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

    /** gcc's arguments as memtrace passes them on: without what would bypass the rewriter. */
    private List<String> compilerArguments(List<String> args, PrintWriter err) throws LaunchException {
        List<String> result = new ArrayList<>(args.size());
        boolean ltoDropped = false;
        for (String a : args) {
            if (a.equals("-static") || a.equals("-static-pie"))
                throw LaunchException.usage("cc: " + a + " is not supported: programs built by memtrace cc load the runtime libmemtrace-rt.so");
            if (a.equals("-pipe")) continue; // the rewriter reads and writes files
            if (a.equals("-flto") || a.startsWith("-flto=")) {
                ltoDropped = true;
                continue;
            }
            result.add(a);
        }
        if (ltoDropped) {
            err.println("memtrace cc: warning: -flto dropped: link-time code generation would bypass the instrumentation");
            err.flush();
        }
        return result;
    }

    /** Whether gcc will link: it is not told to stop earlier and it has at least one input. */
    static boolean links(List<String> args) {
        boolean input = false;
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if (NO_LINK.contains(a)) return false;
            if (SEPARATE_VALUE.contains(a)) {
                i++;
            } else if (!a.startsWith("-") || a.startsWith("-l") || a.equals("-")) {
                input = true;
            }
        }
        return input;
    }

    private static String help(boolean cxx) {
        String name = cxx ? "memtrace c++" : "memtrace cc";
        return """
                Usage: %1$s [MEMTRACE OPTIONS] [%2$s ARGUMENTS]
                A drop-in %2$s: compiles, assembles and links as %2$s does, and inserts a probe before each
                selected memory instruction of the compiled code (docs/compiled-in.md). The program then
                traces itself: MEMTRACE_OUT=prog.mtr ./prog, or memtrace run -- ./prog.
                memtrace's options come before the first %2$s argument (or in MEMTRACE_CC_FLAGS):
                  --omega W       cost factor of paper 001: the share of each basic block's equivalence classes
                                  to instrument, 0..1 (default 1: every memory instruction)
                  --chunk C       tracing granularity in bytes for the selection's distances (default 4096)
                  --scores a,b,c  the selection's distance scores (default 1,2,4)
                  --no-stack      leave stack accesses (rsp/rbp based, push/pop/call/ret) uninstrumented
                  --mode M        log (default), ma (each record stands for its equivalence class) or aia
                                  (also for the classes at distance zero): weights for the summary's counts
                  --keep-asm DIR  keep a copy of every instrumented assembly file in DIR
                  --skeleton      loops log their base registers, trip count and which conditional blocks
                                  ran; memtrace replays their computable accesses (a lossless, smaller
                                  trace; needs omega 1; links with a build-id, which ties trace and skeleton)
                  --check         build a program that checks its own memory accesses as it runs (heap, stack
                                  and global overflows, use after free, double and invalid free, leaks),
                                  with checks pruned where static analysis covers them (docs/check.md);
                                  must be the first option; --check --no-prune keeps every check
                  --              ends memtrace's options
                Everything else goes to %2$s unchanged; -pipe and -flto are dropped, -static is refused.
                MEMTRACE_CC_FLAGS is split into words as a shell would, without expanding anything:
                blanks separate words, '...' quotes literally, "..." quotes with \\" and \\\\ as escapes,
                and \\ outside quotes keeps the next character: --keep-asm '/tmp/my asm'
                """.formatted(name, cxx ? "g++" : "gcc");
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
