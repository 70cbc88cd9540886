package org.memtrace.rewrite;

import java.io.IOException;
import java.nio.file.Path;
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

/**
 * {@code memtrace run --check}'s table of an executable's stack variables, source lines and inlined calls, from
 * its DWARF ({@link DwarfLocals}, {@link DwarfInlines}: the report's inlined frames, docs/check.md), which
 * launch.CheckFrames hands to the fault-mode agent (agent/check_locals.c) or the rewrite mode's check runtime
 * (agent/check/check_stackvars.c). A cold check plan makes it from the DWARF its classifiers read
 * ({@link ModuleRewrite.Prepared#frames}), so the functions and their variables are read once per run; a
 * warm run, or fault mode, reads them here. {@code bytes} null: the executable has no stack variables, lines nor
 * inlined calls to give, or cannot be read (the heap checks need none of this).
 */
public record FrameTable(byte[] bytes) {
    public static final FrameTable NONE = new FrameTable(null);

    /** The table of {@code executable}, read now. */
    public static FrameTable of(Path executable) {
        try {
            ElfFile elf = ElfFile.read(executable);
            DwarfLocals.Frames dwarf = DwarfLocals.readAll(elf);
            return of(elf, dwarf, RspFrames.of(elf, dwarf.optimised()).calls());
        } catch (IOException | RuntimeException e) {
            return NONE; // not an ELF file memtrace can read
        }
    }

    /**
     * The table of {@code elf} from its functions as {@link DwarfLocals#readAll} read them and the optimised ones
     * whose calls all see the CFA at {@code %rsp + k} ({@link RspFrames.Found#calls}): their frames are found from
     * a call's return address (agent/check/check_frames.h); frame-pointer ones keep 0.
     */
    static FrameTable of(ElfFile elf, DwarfLocals.Frames dwarf, Map<Long, Long> calls) {
        try {
            List<DwarfLocals.Function> functions = new ArrayList<>(dwarf.framed());
            Set<Long> framed = new HashSet<>();
            for (DwarfLocals.Function f : functions) framed.add(f.low());
            Set<Long> added = new HashSet<>();
            for (DwarfLocals.Function f : dwarf.optimised())
                if (calls.containsKey(f.low()) && !framed.contains(f.low()) && added.add(f.low())) functions.add(named(f));
            functions.sort(Comparator.comparingLong(DwarfLocals.Function::low));
            LineTable lines = DwarfLines.read(elf, elf.loadSegments());
            // the inlined calls, behind the locals from the next multiple of 8 (agent/check_inlines.c), names raw:
            // the agent spells them (MEMTRACE_CHECK=mangled keeps them)
            byte[] inlines = DwarfInlines.read(elf, Demangler.none()).encode();
            if (functions.isEmpty() && lines.isEmpty() && inlines == null) return NONE;
            byte[] table = DwarfLocals.encode(functions, lines, f -> added.contains(f.low()) ? (int) (calls.get(f.low()) + 1) : 0);
            if (inlines == null) return new FrameTable(table);
            byte[] both = Arrays.copyOf(table, ((table.length + 7) & ~7) + inlines.length);
            System.arraycopy(inlines, 0, both, both.length - inlines.length, inlines.length);
            return new FrameTable(both);
        } catch (RuntimeException e) {
            return NONE;
        }
    }

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
}
