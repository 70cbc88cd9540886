package org.memtrace.check;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.memtrace.instrument.AsStep;
import org.memtrace.instrument.CcOptions;

/**
 * The {@code as} step of {@code memtrace cc --check} ({@code CheckAs <real as> <as arguments>}, run by the gcc
 * wrapper when {@code MEMTRACE_CC_CHECK} is {@code prune} or {@code all}): compiler output is rewritten by
 * {@link CheckRewriter} into the build's state directory and assembled from there; other input is assembled
 * unchanged. If the rewrite or its assembly fails, the original is assembled with a warning: gcc's checks are
 * all still in it, only the pruning and the site names are lost.
 */
public final class CheckAs {
    private CheckAs() {}

    public static void main(String[] args) {
        System.exit(run(List.of(args), System.getenv(), System.err));
    }

    static int run(List<String> args, Map<String, String> env, PrintStream err) {
        if (args.isEmpty()) {
            err.println("memtrace: the as step needs the real assembler's path and its arguments");
            return 2;
        }
        String realAs = args.getFirst();
        List<String> asArgs = args.subList(1, args.size());
        try {
            int input = AsStep.inputIndex(asArgs);
            String state = env.get("MEMTRACE_CC_STATE");
            Path source = input < 0 ? null : Path.of(asArgs.get(input));
            if (source == null || state == null || !listed(Path.of(state), source)) {
                return execute(realAs, asArgs);
            }
            CcOptions options;
            try {
                options = CcOptions.fromEnvironment(env.get("MEMTRACE_CC_OPTIONS"));
            } catch (IllegalArgumentException e) {
                err.println("memtrace: " + e.getMessage());
                return 2;
            }
            boolean prune = !"all".equals(env.get("MEMTRACE_CC_CHECK"));
            String name = source.getFileName().toString();
            Path output = Path.of(state).resolve(name.replaceAll("\\.s$", "") + ".check.s");
            try {
                CheckRewriter.Result r;
                try {
                    // the wrapper's compile without access checks (vectorised loops), when it ran and succeeded
                    Path plain = Path.of(state).resolve("plain-" + name);
                    List<String> plainLines = prune && Files.isRegularFile(plain, LinkOption.NOFOLLOW_LINKS)
                            ? Files.readAllLines(plain, StandardCharsets.UTF_8) : null;
                    r = CheckRewriter.rewrite(Files.readAllLines(source, StandardCharsets.UTF_8), plainLines, prune);
                } catch (IOException | RuntimeException e) {
                    err.println("memtrace cc: warning: " + source + ": the check rewriter failed (" + e + "); its checks are not pruned");
                    return execute(realAs, asArgs);
                }
                Files.write(output, GlobalGuards.around(r.lines()), StandardCharsets.UTF_8);
                if (options.keepAsm().isPresent()) {
                    Files.createDirectories(options.keepAsm().get());
                    Files.copy(output, options.keepAsm().get().resolve(name), StandardCopyOption.REPLACE_EXISTING);
                }
                List<String> rewritten = new ArrayList<>(asArgs);
                rewritten.set(input, output.toString());
                int status = execute(realAs, rewritten);
                if (status != 0) {
                    err.println("memtrace cc: warning: " + source + ": the checked assembly failed (a memtrace bug; "
                            + "--keep-asm DIR keeps it); assembled with gcc's checks unpruned");
                    return execute(realAs, asArgs);
                }
                return 0;
            } finally {
                Files.deleteIfExists(output);
                Files.deleteIfExists(Path.of(state).resolve("plain-" + name));
            }
        } catch (IOException e) {
            err.println("memtrace: " + e.getMessage());
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 1;
        }
    }

    /** Whether cc1 wrote {@code source} for this build: the gcc wrapper lists its outputs in the state directory. */
    private static boolean listed(Path state, Path source) throws IOException {
        Path list = state.resolve("cc1-outputs");
        if (!Files.isRegularFile(list)) return false;
        Path wanted = source.toAbsolutePath().normalize();
        for (String line : Files.readAllLines(list, StandardCharsets.UTF_8)) {
            if (!line.isBlank() && Path.of(line.strip()).toAbsolutePath().normalize().equals(wanted)) return true;
        }
        return false;
    }

    private static int execute(String program, List<String> args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(args.size() + 1);
        command.add(program);
        command.addAll(args);
        return new ProcessBuilder(command).inheritIO().start().waitFor();
    }
}
