package org.memtrace.symbols;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * What memtrace knows about one ELF file, independent of where it is loaded: its name, its PT_LOAD
 * segments, its symbols and its bytes. A file that cannot be read (the vdso, a deleted file, a corrupt one)
 * gives an image with no segments and no symbols; {@link #problem} says why.
 */
public final class ModuleImage {
    private static final String DELETED = " (deleted)";

    private final String path;
    private final String name;
    private final ElfFile elf;
    private final SymbolIndex symbols;
    private final List<ElfSegment> loads;
    private final String problem;
    private final boolean debugFileUsed;

    private ModuleImage(String path, ElfFile elf, SymbolIndex symbols, String problem, boolean debugFileUsed) {
        this.path = path;
        this.name = baseName(path);
        this.elf = elf;
        this.symbols = symbols;
        this.loads = elf == null ? List.of() : elf.loadSegments();
        this.problem = problem;
        this.debugFileUsed = debugFileUsed;
    }

    public static ModuleImage load(String path, DebugFiles debugFiles) {
        try {
            ElfFile elf = ElfFile.read(Path.of(path));
            Optional<ElfFile> debug = elf.symtab().isEmpty() ? debugFiles.find(elf) : Optional.empty();
            return new ModuleImage(path, elf, SymbolIndex.of(elf, debug.orElse(null)), null, debug.isPresent());
        } catch (IOException | RuntimeException e) {
            return unreadable(path, e.getMessage() == null ? e.toString() : e.getMessage());
        }
    }

    public static ModuleImage unreadable(String path, String problem) {
        return new ModuleImage(path, null, SymbolIndex.empty(), problem, false);
    }

    /** The file name as a programmer says it: {@code libc.so.6}, the program's name. */
    public static String baseName(String path) {
        String p = withoutDeletedMark(path);
        int slash = p.lastIndexOf('/');
        return slash >= 0 && slash < p.length() - 1 ? p.substring(slash + 1) : p;
    }

    /** The path of a file that was deleted while mapped, as the memory map shows it, without the mark. */
    static String withoutDeletedMark(String path) {
        return path.endsWith(DELETED) ? path.substring(0, path.length() - DELETED.length()) : path;
    }

    public String path() { return path; }

    public String name() { return name; }

    public SymbolIndex symbols() { return symbols; }

    public List<ElfSegment> loadSegments() { return loads; }

    public Optional<ElfFile> elf() { return Optional.ofNullable(elf); }

    public Optional<String> problem() { return Optional.ofNullable(problem); }

    /** Whether the symbols came in part from a separate debug file. */
    public boolean debugFileUsed() { return debugFileUsed; }

    /** The file-backed bytes at ELF virtual address {@code vaddr}, at most {@code max}; empty when none. */
    public ByteBuffer bytesAt(long vaddr, int max) {
        return elf == null ? ByteBuffer.allocate(0) : elf.bytesAt(vaddr, max);
    }
}
