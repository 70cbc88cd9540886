package org.memtrace.launch;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.memtrace.symbols.Demangler;
import org.memtrace.symbols.DwarfInlines;
import org.memtrace.symbols.DwarfLines;
import org.memtrace.symbols.DwarfLocals;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.LineTable;
import org.memtrace.rewrite.RspFrames;

/**
 * {@code memtrace run --check}'s table of the executable's stack variables, source lines and inlined calls, from
 * its DWARF ({@link DwarfLocals}, {@link DwarfInlines}: the report's inlined frames, docs/check.md), handed to the fault-mode agent (agent/check_locals.c), or in rewrite mode to the check runtime (agent/check/check_stackvars.c), as a file whose path is
 * {@code MEMTRACE_CHECK_FRAMES}: created afresh (O_EXCL, 0600, a random name next to the event ring) and
 * deleted when the run ends; the agent opens it with O_NOFOLLOW and checks every count against its size.
 * An executable without DWARF, or one that cannot be read, gets no file: the run is checked as before.
 */
final class CheckFrames {
    private CheckFrames() {}

    /**
     * {@code f} named by the inlined call all its variables are declared in, when there is one (the report's
     * {@code <stack:source@copy>} as at -O0, where {@code copy} is not inlined), else as it is: the table names a
     * variable by its frame's function only.
     */
    private static DwarfLocals.Function named(DwarfLocals.Function f) {
        String scope = f.locals().getFirst().scope();
        if (scope == null || f.locals().stream().anyMatch(l -> !scope.equals(l.scope()))) return f;
        return new DwarfLocals.Function(scope, f.low(), f.high(), f.locals(), f.unoptimised(), f.described());
    }

    /** The table's file for {@code executable}, or null when it has no stack variables nor lines to give. */
    static Path write(Path executable, Path dir) {
        byte[] table;
        try {
            ElfFile elf = ElfFile.read(executable);
            List<DwarfLocals.Function> functions = new ArrayList<>(DwarfLocals.read(elf));
            // optimised functions whose calls all see the CFA at %rsp + k: their frames are found from a call's
            // return address (agent/check/check_frames.h); frame-pointer ones keep 0
            List<DwarfLocals.Function> optimised = DwarfLocals.readOptimised(elf);
            Map<Long, Long> calls = RspFrames.cfaAtCalls(elf, optimised);
            Set<Long> framed = new HashSet<>();
            for (DwarfLocals.Function f : functions) framed.add(f.low());
            Set<Long> added = new HashSet<>();
            for (DwarfLocals.Function f : optimised)
                if (calls.containsKey(f.low()) && !framed.contains(f.low()) && added.add(f.low())) functions.add(named(f));
            functions.sort(Comparator.comparingLong(DwarfLocals.Function::low));
            LineTable lines = DwarfLines.read(elf, elf.loadSegments());
            // the inlined calls, behind the locals from the next multiple of 8 (agent/check_inlines.c), names raw:
            // the agent spells them (MEMTRACE_CHECK=mangled keeps them)
            byte[] inlines = DwarfInlines.read(elf, Demangler.none()).encode();
            if (functions.isEmpty() && lines.isEmpty() && inlines == null) return null;
            table = DwarfLocals.encode(functions, lines, f -> added.contains(f.low()) ? (int) (calls.get(f.low()) + 1) : 0);
            if (inlines != null) {
                byte[] both = Arrays.copyOf(table, ((table.length + 7) & ~7) + inlines.length);
                System.arraycopy(inlines, 0, both, both.length - inlines.length, inlines.length);
                table = both;
            }
        } catch (IOException | RuntimeException e) {
            return null; // not an ELF file memtrace can read: the heap checks need none of this
        }
        Path file = null;
        try {
            file = Files.createTempFile(dir, "memtrace-", ".frames",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.write(file, table, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING, LinkOption.NOFOLLOW_LINKS);
            return file;
        } catch (IOException e) {
            if (file != null) Processes.deleteQuietly(file);
            return null;
        }
    }
}
