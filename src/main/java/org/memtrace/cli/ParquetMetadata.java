package org.memtrace.cli;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.SequencedMap;
import org.memtrace.heap.SymbolicNaming;
import org.memtrace.mtr.CcBuild;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfFormatException;
import org.memtrace.symbols.LoadedModule;

/**
 * The key/value metadata of a Parquet export (docs/convert.md, "Metadata"): which memtrace wrote it and in
 * which column layout, from which trace, of which program (its first module, with its build-id and, when
 * memtrace cc built it, the options it was built with), and, once
 * the trace is read, whether it was whole.
 */
final class ParquetMetadata {
    /** The column layout: 1 ended at {@code offset}, 2 added {@code source}. */
    static final String SCHEMA = "2";

    private ParquetMetadata() {}

    /** {@code read} is null while the trace is still being read. */
    static SequencedMap<String, String> of(Path trace, SymbolicNaming naming, TraceInput.Outcome read) {
        SequencedMap<String, String> kv = new LinkedHashMap<>();
        kv.put("memtrace.version", new Main.Version().getVersion()[0]);
        kv.put("memtrace.schema", SCHEMA);
        kv.put("memtrace.trace", trace.toString());
        var modules = naming.addressSpace().modules();
        if (!modules.isEmpty()) {
            LoadedModule program = modules.getFirst();
            kv.put("memtrace.program", program.image().path());
            program.image().elf().flatMap(elf -> elf.buildIdHex()).ifPresent(id -> kv.put("memtrace.program.build_id", id));
            program.image().elf().map(ParquetMetadata::ccOptions).filter(o -> !o.isEmpty())
                    .ifPresent(o -> kv.put("memtrace.program.cc_options", o));
        }
        if (read != null) {
            kv.put("memtrace.complete", read.problems().isEmpty() ? "true" : "false: " + Main.oneLine(read.problems().getFirst()));
        }
        return kv;
    }

    /** How memtrace cc built the program ({@code memtrace cc --omega 1.0 …}, "; " between sets), or "". */
    private static String ccOptions(ElfFile elf) {
        try {
            return String.join("; ", CcBuild.options(elf));
        } catch (ElfFormatException e) {
            return ""; // a damaged options section: the key is left out, as for a program not built by memtrace cc
        }
    }
}
