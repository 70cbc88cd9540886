package org.memtrace.skeleton;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.memtrace.mtr.MtrFile;
import org.memtrace.mtr.MtrFormatException;
import org.memtrace.mtr.MtrReader;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfSymbol;

/**
 * {@code memtrace skeleton --emit-c}: a {@code .mtr} trace as a C program and its logged input
 * (docs/skeleton-c.md). The program prints the trace's data accesses again, its skeleton loops as C loops
 * over affine addresses, everything else from the input; its output equals {@code memtrace convert --to
 * lackey} of the same trace, line for line.
 */
public final class SkeletonProgram {
    private SkeletonProgram() {}

    /**
     * What was written: loops that ran, logged sites, accesses logged and computed, the input's bytes, and why
     * the trace was read only in part (damage, a cut; empty when whole): the program then prints what precedes it.
     */
    public record Summary(int loops, int sites, long logged, long computed, long blocks, int threads, long inputBytes,
                          List<String> problems) {}

    /** The trace cannot be written as a program; the message says why, in one sentence. */
    public static final class NotEmitted extends Exception {
        NotEmitted(String message) { super(message); }
    }

    /** The file's functions, for the loops' comments; none when it cannot be read (it was, a moment ago, by the reader). */
    private static List<ElfSymbol> functions(String path) {
        try {
            ElfFile elf = ElfFile.read(Path.of(path));
            return (elf.symtab().isEmpty() ? elf.dynsym() : elf.symtab()).stream().filter(ElfSymbol::isFunction).toList();
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
    }

    /**
     * Reads {@code trace} and writes the program to {@code source} and its input to {@code input}; the
     * names are how the program's comment and its default input path call them.
     */
    public static Summary emit(Path trace, Path source, String sourceName, Path input, String inputName)
            throws NotEmitted, IOException, MtrFormatException {
        LoggedInput logged;
        MtrReader.Result result;
        try (MtrFile file = MtrFile.open(trace); InputWriter out = new InputWriter(input)) {
            logged = new LoggedInput(out);
            result = MtrReader.read(file, logged, logged, logged);
            logged.finish();
            // a damaged or cut file is written up to the damage (and said); records that do not fit the files are not
            if (!result.problems().isEmpty() && !result.damaged()) throw new NotEmitted(String.join("; ", result.problems()));
            if (logged.problem != null) throw new NotEmitted(logged.problem);
            out.finish();
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
        if (result.skeleton().computed() != logged.computed)
            throw new NotEmitted("the reader computed " + result.skeleton().computed() + " accesses but handed on " + logged.computed);
        Map<LoggedInput.Placement, String> functions = new HashMap<>();
        Map<String, List<ElfSymbol>> symbols = new HashMap<>();
        for (LoggedInput.Placement p : logged.loops) {
            String file = logged.file(p.bias);
            if (file == null) continue;
            for (ElfSymbol f : symbols.computeIfAbsent(file, SkeletonProgram::functions))
                if (f.value() <= p.loop.entry() && p.loop.entry() < f.value() + f.size())
                    functions.put(p, f.name() + "+0x" + Long.toHexString(p.loop.entry() - f.value()) + " in " + Path.of(file).getFileName());
        }
        String c;
        try {
            c = CSource.render(new CSource.About(trace.toString(), sourceName, inputName, logged.logged, logged.computed, logged.blocks,
                    logged.threads.size()), logged.sites, logged.loops, functions);
        } catch (CSource.UnknownShape e) {
            throw new NotEmitted(e.getMessage());
        }
        Files.writeString(source, c);
        return new Summary(logged.loops.size(), logged.sites.size(), logged.logged, logged.computed, logged.blocks,
                logged.threads.size(), Files.size(input), result.problems());
    }
}
