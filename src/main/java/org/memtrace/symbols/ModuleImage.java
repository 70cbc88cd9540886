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
    /** The separate debug file found for the symbols, if any: lines come from it too. */
    private final ElfFile debug;
    private final DebugFiles debugFiles;
    private LineTable lines;
    private volatile DwarfTypes types;
    private DwarfInlines inlines;
    private final Demangler demangler;

    private ModuleImage(String path, ElfFile elf, SymbolIndex symbols, String problem, ElfFile debug, DebugFiles debugFiles, Demangler demangler) {
        this.path = path;
        this.demangler = demangler;
        this.name = baseName(path);
        this.elf = elf;
        this.symbols = symbols;
        this.loads = elf == null ? List.of() : elf.loadSegments();
        this.problem = problem;
        this.debugFileUsed = debug != null;
        this.debug = debug;
        this.debugFiles = debugFiles;
    }

    public static ModuleImage load(String path, DebugFiles debugFiles) {
        return load(path, debugFiles, Demangler.system());
    }

    /** The module at {@code path}, its C++ names spelled by {@code demangler} (raw with {@link Demangler#none()}). */
    public static ModuleImage load(String path, DebugFiles debugFiles, Demangler demangler) {
        try {
            ElfFile elf = ElfFile.read(RecordedPath.of(path));
            Optional<ElfFile> debug = elf.symtab().isEmpty() ? debugFiles.find(elf) : Optional.empty();
            return new ModuleImage(path, elf, SymbolIndex.of(elf, debug.orElse(null), demangler), null, debug.orElse(null), debugFiles,
                    demangler);
        } catch (IOException | RuntimeException e) {
            return unreadable(path, e.getMessage() == null ? e.toString() : e.getMessage());
        }
    }

    public static ModuleImage unreadable(String path, String problem) {
        return new ModuleImage(path, null, SymbolIndex.empty(), problem, null, null, Demangler.none());
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

    /**
     * The module's source lines by link-time address, from its own {@code .debug_line} or else its separate
     * debug file's (found by build-id or debug link). Parsed on first use, once: a module the trace never
     * asks about costs nothing. An empty table says in {@link LineTable#problem} why there are no lines.
     */
    public synchronized LineTable lines() {
        if (lines == null) lines = readLines();
        return lines;
    }

    /** The line table if something asked for it already, else null: never parses one. */
    synchronized LineTable linesIfRead() {
        return lines;
    }

    private LineTable readLines() {
        if (elf == null) return LineTable.unavailable(problem);
        if (hasLines(elf)) return DwarfLines.read(elf, loads);
        // A module whose symbols are its own may still have its lines only in a debug file (strip -g).
        ElfFile separate = debug != null ? debug : debugFiles.find(elf).orElse(null);
        if (separate != null && hasLines(separate)) return DwarfLines.read(separate, loads);
        return LineTable.unavailable(path + ": no .debug_line" + (separate == null ? " and no separate debug file"
                : " here nor in " + separate.path()) + " (compiled without -g?)");
    }

    /**
     * The types of the module's global and static variables, from its own {@code .debug_info} or else its
     * separate debug file's; read on the first name asked inside a variable of this module, once.
     */
    public DwarfTypes types() {
        // Read without the lock once set: every global's name asks (issue 22), and a lock per name costs.
        DwarfTypes t = types;
        if (t != null) return t;
        synchronized (this) {
            if (types == null) types = readTypes();
            return types;
        }
    }

    private DwarfTypes readTypes() {
        if (elf == null) return DwarfTypes.none(problem);
        if (hasTypes(elf)) return DwarfTypes.read(elf);
        ElfFile separate = debug != null ? debug : debugFiles.find(elf).orElse(null);
        if (separate != null && hasTypes(separate)) return DwarfTypes.read(separate);
        return DwarfTypes.none(path + ": no .debug_info (compiled without -g?)");
    }

    /**
     * The module's inlined calls (DW_TAG_inlined_subroutine), from its own {@code .debug_info} or else its
     * separate debug file's; read when a stack frame in this module is first named, once.
     */
    public synchronized DwarfInlines inlines() {
        if (inlines == null) inlines = readInlines();
        return inlines;
    }

    private DwarfInlines readInlines() {
        if (elf == null) return DwarfInlines.none(problem);
        if (hasTypes(elf)) return DwarfInlines.read(elf, demangler);
        ElfFile separate = debug != null ? debug : debugFiles.find(elf).orElse(null);
        if (separate != null && hasTypes(separate)) return DwarfInlines.read(separate, demangler);
        return DwarfInlines.none(path + ": no .debug_info (compiled without -g?)");
    }

    private static boolean hasTypes(ElfFile file) {
        return file.section(".debug_info").filter(s -> s.fileSize() > 0).isPresent();
    }

    /**
     * The global or static variable covering link-time address {@code vaddr}, down to the field and index
     * when the module's DWARF knows its type ({@code table[3].value+0}), else {@code name+offset}; null
     * when no object symbol covers the address.
     */
    public String variable(long vaddr) {
        return variable(vaddr, "");
    }

    /**
     * {@link #variable(long)} with the object's qualifiers ({@link SymbolIndex.Symbol#qualifier}, then
     * {@code moduleQualifier}) after the field path and before the offset: {@code table[3].value@file2.c+0}.
     */
    public String variable(long vaddr, String moduleQualifier) {
        SymbolIndex.Symbol s = symbols.objectAt(vaddr);
        if (s == null) return null;
        String qualifiers = s.qualifier() + moduleQualifier;
        String path = types().path(s.start(), vaddr - s.start());
        if (path == null) return s.name() + qualifiers + '+' + (vaddr - s.start());
        if (qualifiers.isEmpty()) return s.name() + path;
        int plus = path.lastIndexOf('+');
        return s.name() + path.substring(0, plus) + qualifiers + path.substring(plus);
    }

    private static boolean hasLines(ElfFile file) {
        return file.section(".debug_line").filter(s -> s.fileSize() > 0).isPresent();
    }

    /** The file-backed bytes at ELF virtual address {@code vaddr}, at most {@code max}; empty when none. */
    public ByteBuffer bytesAt(long vaddr, int max) {
        return elf == null ? ByteBuffer.allocate(0) : elf.bytesAt(vaddr, max);
    }
}
