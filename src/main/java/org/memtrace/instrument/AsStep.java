package org.memtrace.instrument;


import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The {@code as} step of {@code memtrace cc}: {@code AsStep <real as> <as arguments>}, run by the gcc
 * wrapper in place of the assembler. Compiler output listed in {@code $MEMTRACE_CC_STATE/cc1-outputs} is
 * rewritten with probes ({@link Rewriter}) into the state directory and assembled from there; any other
 * input is assembled unchanged. Exits with the real assembler's status, whose stderr passes through. An
 * object that may go into a shared library (cc1 ran with -fPIC or -fpic, listed in {@code cc1-pic-outputs},
 * or gcc links -shared: {@code MEMTRACE_CC_SHARED=1}) gets probes that find the cursor through the GOT.
 *
 * <p>Whatever goes wrong inside the rewriter ends in the uninstrumented object and a warning, never in a
 * failed build nor a broken binary (Zydis missing included: that is a RuntimeException).
 */
public final class AsStep {
    /** gas options whose value is the next argument. */
    private static final Set<String> WITH_VALUE = Set.of("-o", "-I", "--MD", "--defsym", "--debug-prefix-map");

    private final PrintStream err;
    /** The directory gcc ran the assembler in: relative paths among its arguments are relative to it. */
    private final Path cwd;
    /**
     * Whether the assembler's messages go to this process's own stderr (a step of its own, run by the gcc
     * wrapper) or into {@link #err} (a step the compile server runs for a client, whose stderr it is not).
     */
    private final boolean inheritStderr;

    AsStep(PrintStream err, Path cwd, boolean inheritStderr) {
        this.err = err;
        this.cwd = cwd;
        this.inheritStderr = inheritStderr;
    }

    /** A step the compile server runs for a client in {@code cwd}: every message goes to {@code err}. */
    public static int forClient(PrintStream err, Path cwd, List<String> args, Map<String, String> env) {
        return new AsStep(err, cwd, false).run(args, env);
    }

    public static void main(String[] args) {
        System.exit(new AsStep(System.err, Path.of("").toAbsolutePath(), true).run(List.of(args), System.getenv()));
    }

    int run(List<String> args, Map<String, String> env) {
        if (args.isEmpty()) {
            err.println("memtrace: the as step needs the real assembler's path and its arguments");
            return 2;
        }
        String realAs = args.getFirst();
        List<String> asArgs = args.subList(1, args.size());
        try {
            CcOptions options;
            try {
                options = CcOptions.fromEnvironment(env.get("MEMTRACE_CC_OPTIONS"));
            } catch (IllegalArgumentException e) {
                err.println("memtrace: " + e.getMessage());
                return 2;
            }
            int input = inputIndex(asArgs);
            String state = env.get("MEMTRACE_CC_STATE");
            Path source = input < 0 ? null : cwd.resolve(asArgs.get(input));
            if (source == null || state == null || !listed(cwd.resolve(state), source, "cc1-outputs")) {
                err.println("memtrace cc: note: " + (source == null ? "<stdin>" : asArgs.get(input))
                        + " is not compiler output, assembled uninstrumented");
                return execute(realAs, asArgs);
            }
            boolean local = !"1".equals(env.get("MEMTRACE_CC_SHARED")) && !listed(cwd.resolve(state), source, "cc1-pic-outputs");
            return instrumented(realAs, asArgs, input, source, cwd.resolve(state), options, local);
        } catch (IOException e) {
            err.println("memtrace: " + e.getMessage());
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println("memtrace: interrupted");
            return 1;
        }
    }

    private int instrumented(String realAs, List<String> asArgs, int input, Path source, Path state, CcOptions options,
                             boolean localCursor) throws IOException, InterruptedException {
        // cc1's outputs have unique names within a build, and the state directory is the build's own.
        Path output = state.resolve(stem(source) + ".mt.s");
        try {
            Rewriter.Result result;
            try {
                result = new Rewriter(options, (labeled, object) -> assembleQuietly(realAs, asArgs, input, labeled, object),
                        localCursor).rewrite(source, output);
            } catch (Rewriter.InputRejected e) {
                return execute(realAs, asArgs); // the assembler explains what is wrong with its input
            } catch (IOException | RuntimeException e) {
                err.println("memtrace cc: warning: " + source + ": the rewriter failed (" + e.getMessage()
                        + "); assembled uninstrumented");
                return execute(realAs, asArgs);
            }
            for (String w : result.warnings()) {
                err.println("memtrace cc: warning: " + result.source() + ": " + w);
            }
            if (options.keepAsm().isPresent()) {
                Path dir = cwd.resolve(options.keepAsm().get());
                Files.createDirectories(dir);
                Files.copy(output, dir.resolve(stem(Path.of(result.source())) + ".s"), StandardCopyOption.REPLACE_EXISTING);
            }
            var args = new ArrayList<>(asArgs);
            args.set(input, output.toString());
            int status = execute(realAs, args);
            if (status != 0) {
                err.println("memtrace cc: warning: " + result.source() + ": the instrumented assembly failed (a memtrace "
                        + "bug; --keep-asm DIR keeps it); assembled uninstrumented");
                return execute(realAs, asArgs);
            }
            return status;
        } finally {
            Files.deleteIfExists(output);
        }
    }

    /** Where the input is among the arguments: the one operand; -1 for none, several, or "-" (stdin). */
    static int inputIndex(List<String> asArgs) {
        int found = -1;
        for (int i = 0; i < asArgs.size(); i++) {
            String a = asArgs.get(i);
            if (WITH_VALUE.contains(a)) {
                i++;
            } else if (!a.startsWith("-")) {
                if (found >= 0) {
                    return -1;
                }
                found = i;
            } else if (a.equals("-") || a.equals("--")) {
                return -1;
            }
        }
        return found;
    }

    /** Whether the state directory's list {@code name} (one path a line, written by the gcc wrapper) holds {@code source}. */
    private boolean listed(Path state, Path source, String name) throws IOException {
        Path list = state.resolve(name);
        if (!Files.isRegularFile(list)) {
            return false;
        }
        Path wanted = source.normalize();
        for (String line : Files.readAllLines(list, StandardCharsets.UTF_8)) {
            if (!line.isBlank() && cwd.resolve(line.strip()).normalize().equals(wanted)) {
                return true;
            }
        }
        return false;
    }

    private static String stem(Path p) {
        String name = p.getFileName().toString();
        int dot = name.lastIndexOf('.');
        return dot > 0 ? name.substring(0, dot) : name;
    }

    /** The real assembler on the labeled copy, its output to {@code object}; its messages are not the user's. */
    private boolean assembleQuietly(String realAs, List<String> asArgs, int input, Path labeled, Path object)
            throws IOException, InterruptedException {
        var command = new ArrayList<String>();
        command.add(realAs);
        command.add("--keep-locals");
        for (int i = 0; i < asArgs.size(); i++) {
            String a = asArgs.get(i);
            if (i == input) {
                command.add(labeled.toString());
            } else if (a.equals("-o") && i + 1 < asArgs.size()) {
                command.add("-o");
                command.add(object.toString());
                i++;
            } else if (a.startsWith("-o") && a.length() > 2) {
                command.add("-o" + object);
            } else if (a.equals("--MD") && i + 1 < asArgs.size()) {
                i++; // the build's dependency file is the real run's to write
            } else {
                command.add(a);
            }
        }
        if (!asArgs.contains("-o") && asArgs.stream().noneMatch(a -> a.startsWith("-o") && a.length() > 2)) {
            command.add("-o");
            command.add(object.toString());
        }
        Process p = new ProcessBuilder(command).directory(cwd.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        return p.waitFor() == 0;
    }

    private int execute(String program, List<String> args) throws IOException, InterruptedException {
        var command = new ArrayList<String>(args.size() + 1);
        command.add(program);
        command.addAll(args);
        var pb = new ProcessBuilder(command).directory(cwd.toFile());
        if (inheritStderr) return pb.inheritIO().start().waitFor();
        // the assembler writes nothing on stdout: its messages, whichever stream, are the client's stderr
        Process p = pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).redirectErrorStream(true).start();
        p.getInputStream().transferTo(err);
        return p.waitFor();
    }
}
