package org.memtrace.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import org.memtrace.io.IoReason;
import org.memtrace.launch.LaunchException;
import org.memtrace.mtr.MtrFormatException;
import org.memtrace.skeleton.SkeletonProgram;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code memtrace skeleton --emit-c}: a skeleton trace as a C program that prints its accesses again. */
@Command(name = "skeleton", mixinStandardHelpOptions = true,
        description = {"Writes a .mtr trace as a C program and its logged input.",
                "Compiled with plain gcc, the program prints the run's data accesses in Valgrind Lackey's format (as memtrace convert --to lackey does), computing the skeleton loops' addresses and reading the rest from the input. See docs/skeleton-c.md."},
        exitCodeListHeading = "%nExit status:%n",
        exitCodeList = {"0:the program and its input are written", "1:the trace is damaged or cut short (the program prints what precedes the damage), or cannot be written as a program",
                "2:usage error (no such trace, not a .mtr file, unwritable output)"})
final class SkeletonCommand implements Callable<Integer> {
    @Spec CommandLine.Model.CommandSpec spec;

    @Parameters(index = "0", paramLabel = "TRACE", description = "A .mtr file that a program built with memtrace cc (--skeleton or not) wrote.")
    Path trace;

    @Option(names = "--emit-c", required = true, description = "Write the C program (the only output this command has today).")
    boolean emitC;

    @Option(names = {"-o", "--output"}, required = true, paramLabel = "FILE.c", description = "The C file to write.")
    Path output;

    @Option(names = "--input", paramLabel = "FILE", description = "Where the program's input goes (default: FILE.c with .in for .c).")
    Path input;

    @Override
    public Integer call() throws LaunchException {
        if (!TraceInput.compiledIn(trace))
            throw LaunchException.usage(trace + " is a saved event stream: --emit-c reads .mtr traces of programs built with memtrace cc");
        Path in = input != null ? input : defaultInput(output);
        if (in.toAbsolutePath().normalize().equals(output.toAbsolutePath().normalize()))
            throw LaunchException.usage("the program and its input would both be " + output + ": name another --input");
        if (OutputFile.isStandardOutput(output) || OutputFile.isStandardOutput(in))
            throw LaunchException.usage("the program and its input are two files: name them (standard output cannot hold both)");
        try (OutputFile source = OutputFile.create(output, List.of(trace)); OutputFile data = OutputFile.create(in, List.of(trace))) {
            SkeletonProgram.Summary s = SkeletonProgram.emit(trace, source.temporary(), output.getFileName().toString(),
                    data.temporary(), in.getFileName().toString());
            data.commit();
            source.commit();
            PrintWriter err = spec.commandLine().getErr();
            err.printf("memtrace: %s: %d skeleton loops, %d logged sites; %s: %,d bytes for %,d logged and %,d computed accesses%n",
                    output, s.loops(), s.sites(), in, s.inputBytes(), s.logged(), s.computed());
            err.flush();
            // the program of a damaged trace prints what precedes the damage; the damage is said here
            s.problems().forEach(p -> err.println("memtrace: " + Main.oneLine(p)));
            err.flush();
            return s.problems().isEmpty() ? 0 : TraceInput.DAMAGED;
        } catch (SkeletonProgram.NotEmitted e) {
            throw LaunchException.environment(trace + ": " + e.getMessage(), e);
        } catch (MtrFormatException e) {
            throw LaunchException.environment(trace + ": " + e.getMessage(), e);
        } catch (IOException e) {
            throw LaunchException.environment("cannot write " + output + ": " + IoReason.of(e), e);
        }
    }

    /** skel.c → skel.in; a name without .c gets .in added. */
    static Path defaultInput(Path c) {
        String name = c.getFileName().toString();
        String base = name.endsWith(".c") && name.length() > 2 ? name.substring(0, name.length() - 2) : name;
        return c.resolveSibling(base + ".in");
    }
}
