package org.memtrace.cc;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.memtrace.instrument.CcOptions;
import org.memtrace.instrument.OptionWords;
import org.memtrace.launch.LaunchException;
import org.memtrace.check.CheckMode;
import org.memtrace.launch.NativeFiles;

/**
 * What {@code memtrace cc ARGS} does, decided without running anything: the gcc command line (with
 * {@code -wrapper} and, when it links, the runtime) and the variables the wrapper reads, or the help text,
 * or the one line that refuses the arguments. {@code memtrace cc} in its own JVM and the compile server
 * (which hands the command back to the shell client that runs gcc) share it, so both build the same.
 */
public sealed interface CcPlan {
    /** {@code --help}: the text for stdout, status 0. */
    record Help(String text) implements CcPlan {}

    /** Arguments refused: one line for stderr (without the {@code memtrace: } prefix), status 2. */
    record Refusal(String message) implements CcPlan {}

    /**
     * Run {@code command} with {@code environment} set (a null value: removed) and a fresh state directory in
     * {@code MEMTRACE_CC_STATE}; {@code warnings} go to stderr first.
     */
    record Compile(List<String> command, Map<String, String> environment, List<String> warnings) implements CcPlan {}

    /** Options of gcc that take the next argument as their value: that value is not an input file. */
    Set<String> SEPARATE_VALUE = Set.of("-o", "-I", "-L", "-D", "-U", "-include", "-imacros",
            "-isystem", "-idirafter", "-iprefix", "-iwithprefix", "-iquote", "-isysroot", "-x", "-MF", "-MT", "-MQ",
            "-Xlinker", "-Xassembler", "-Xpreprocessor", "-T", "-u", "-e", "-z", "-aux-info", "--param", "-dumpbase",
            "-dumpdir", "-dumpbase-ext", "-wrapper", "-B", "-specs");
    /** gcc stops before linking with any of these. */
    Set<String> NO_LINK = Set.of("-c", "-S", "-E", "-M", "-MM", "-fsyntax-only");

    /** JVM options of the rewriter's own JVM, the wrapper's fallback when no compile server answers. */
    String REWRITER_JAVA_OPTIONS = "--enable-native-access=ALL-UNNAMED -XX:+UseSerialGC -XX:TieredStopAtLevel=1 "
            + "-Xshare:auto -Xlog:disable -Xlog:all=off";

    /**
     * The plan for {@code memtrace cc} ({@code cxx}: {@code memtrace c++}) with {@code arguments}, in an
     * environment that may hold MEMTRACE_CC_FLAGS, MEMTRACE_GCC and MEMTRACE_CXX.
     */
    static CcPlan of(boolean cxx, List<String> arguments, Map<String, String> env) throws LaunchException {
        List<String> all = new ArrayList<>();
        try {
            all.addAll(OptionWords.split(env.get("MEMTRACE_CC_FLAGS")));
        } catch (IllegalArgumentException e) {
            return new Refusal("cc: MEMTRACE_CC_FLAGS: " + e.getMessage());
        }
        all.addAll(arguments);
        if (!all.isEmpty() && (all.getFirst().equals("--help") || all.getFirst().equals("-h"))) return new Help(help(cxx));
        CheckMode check = CheckMode.split(all);
        CcOptions.Split parsed;
        try {
            parsed = CcOptions.split(check.rest());
        } catch (IllegalArgumentException e) {
            return new Refusal(e.getMessage() + " (see 'memtrace " + (cxx ? "c++" : "cc") + " --help')");
        }
        List<String> gccArgs = new ArrayList<>(parsed.rest().size());
        boolean ltoDropped = false;
        for (String a : parsed.rest()) {
            if (a.equals("-static") || a.equals("-static-pie"))
                return new Refusal("cc: " + a + " is not supported: programs built by memtrace cc load the runtime libmemtrace-rt.so");
            if (a.equals("-pipe")) continue; // the rewriter reads and writes files
            if (a.equals("-flto") || a.startsWith("-flto=")) {
                ltoDropped = true;
                continue;
            }
            gccArgs.add(a);
        }
        if (check.on() && parsed.options().skeleton()) return new Refusal("cc: --check cannot be combined with --skeleton");
        if (check.on() && CheckMode.conflict(gccArgs) != null) return new Refusal("cc: " + CheckMode.conflict(gccArgs));
        List<String> warnings = ltoDropped
                ? List.of("memtrace cc: warning: -flto dropped: link-time code generation would bypass the instrumentation")
                : List.of();
        String compiler = env.getOrDefault(cxx ? "MEMTRACE_CXX" : "MEMTRACE_GCC", cxx ? "g++" : "gcc");
        List<String> command = new ArrayList<>(List.of(compiler, "-wrapper", NativeFiles.ccWrapper().toString()));
        boolean links = links(gccArgs);
        // The runtime comes first, before the user's objects and libraries: it is then the first library the
        // loader searches after the program, ahead of any -lstdc++, -lc or -ljemalloc of the user's that also
        // defines malloc or operator new, as if preloaded; the user's own arguments keep gcc's order exactly.
        // --no-as-needed: with gcc's default --as-needed a library before the objects would be dropped, and a
        // program whose every probe was left out still records its allocations. Its directory goes after the
        // user's arguments (-L applies to every -l wherever it stands), so the user's -L directories are searched
        // first, as with gcc alone.
        String library = check.on() ? "-lmemtrace-check" : "-lmemtrace-rt";
        if (links) command.addAll(List.of("-Wl,--push-state,--no-as-needed", library, "-Wl,--pop-state"));
        command.addAll(gccArgs);
        if (links) {
            Path runtime = (check.on() ? NativeFiles.checkRuntime() : NativeFiles.runtime()).getParent();
            command.addAll(List.of("-L" + runtime, "-Wl,-rpath," + runtime));
            // the build-id is the checksum that ties a trace to the skeleton it is replayed from; after the
            // user's arguments, so that a --build-id=none among them does not leave the program without one
            if (!check.on() && parsed.options().skeleton()) command.add("-Wl,--build-id=sha1");
        }
        Map<String, String> environment = new LinkedHashMap<>();
        environment.put("MEMTRACE_CC_OPTIONS", OptionWords.join(parsed.optionWords()));
        // objects compiled on a -shared command line go into a shared library, whatever cc1 was told
        environment.put("MEMTRACE_CC_SHARED", gccArgs.contains("-shared") ? "1" : null);
        environment.put("MEMTRACE_JAVA", Path.of(System.getProperty("java.home"), "bin", "java").toString());
        environment.put("MEMTRACE_CLASSPATH", System.getProperty("java.class.path"));
        environment.put("MEMTRACE_JAVA_OPTIONS", REWRITER_JAVA_OPTIONS + libraryOption());
        environment.put("MEMTRACE_CC_CHECK", check.mode());     // null: removed (an ordinary build)
        return new Compile(List.copyOf(command), environment, warnings);
    }

    /** An installed memtrace's library directory, passed on to the rewriter's JVM (NativeFiles.LIBRARY_PROPERTY). */
    private static String libraryOption() {
        String lib = System.getProperty(NativeFiles.LIBRARY_PROPERTY);
        return lib == null || lib.contains(" ") ? "" : " -D" + NativeFiles.LIBRARY_PROPERTY + "=" + lib;
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
                A compile server keeps one JVM for every call of a build (docs/compiled-in.md, "The
                compile server"); memtrace-cc and memtrace-c++ are the same drivers as single commands
                (CMake's -DCMAKE_C_COMPILER=memtrace-cc).
                """.formatted(name, cxx ? "g++" : "gcc");
    }
}
