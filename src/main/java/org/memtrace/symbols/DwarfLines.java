package org.memtrace.symbols;

import static org.memtrace.symbols.Dwarf.*;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongFunction;
import java.util.function.LongPredicate;

/**
 * Reads the DWARF line tables ({@code .debug_line}, versions 2 to 5 as gcc writes them) of an ELF file into
 * one {@link LineTable}. Every read is checked against the section's end; any flaw in any unit (a cut
 * section, an unknown form, a file index the header lacks) gives an empty table whose problem names the
 * unit's offset and the flaw, because half a table would name some instructions and silently not others.
 *
 * <p>Choices, for addr2line's agreement: all rows count whatever their {@code is_stmt} (a non-statement row
 * still says which line the instruction came from); of several rows at one address the last wins; a
 * sequence covers its rows up to its end address, and the addresses between sequences, like rows of line
 * 0, have no line. Columns are not kept.
 * Sequences that do not start in an executable segment (functions the linker discarded keep their rows at
 * address 0) are dropped, as is a sequence overlapping one that starts lower ({@link LineRows} chooses).
 */
public final class DwarfLines {

    private static final int DW_LNS_COPY = 1;
    private static final int DW_LNS_ADVANCE_PC = 2;
    private static final int DW_LNS_ADVANCE_LINE = 3;
    private static final int DW_LNS_SET_FILE = 4;
    private static final int DW_LNS_SET_COLUMN = 5;
    private static final int DW_LNS_NEGATE_STMT = 6;
    private static final int DW_LNS_SET_BASIC_BLOCK = 7;
    private static final int DW_LNS_CONST_ADD_PC = 8;
    private static final int DW_LNS_FIXED_ADVANCE_PC = 9;
    private static final int DW_LNS_SET_PROLOGUE_END = 10;
    private static final int DW_LNS_SET_EPILOGUE_BEGIN = 11;
    private static final int DW_LNS_SET_ISA = 12;
    private static final int DW_LNE_END_SEQUENCE = 1;
    private static final int DW_LNE_SET_ADDRESS = 2;
    private static final int DW_LNE_DEFINE_FILE = 3;

    private static final int DW_LNCT_PATH = 1;
    private static final int DW_LNCT_DIRECTORY_INDEX = 2;


    private DwarfLines() {}

    /**
     * The line table of {@code elf}, whose {@code .debug_line} may be its own or, for a stripped module, its
     * separate debug file's; {@code code} are the executable segments of the module as loaded (the debug
     * file repeats them). Never throws: an unreadable table is an empty one with its reason.
     */
    public static LineTable read(ElfFile elf, List<ElfSegment> code) {
        Optional<ElfSection> line = elf.section(".debug_line");
        if (line.isEmpty() || line.get().fileSize() == 0) return LineTable.unavailable(elf.path() + " has no .debug_line");
        try {
            ByteBuffer lineStr = DwarfSections.contents(elf, ".debug_line_str");
            ByteBuffer str = DwarfSections.contents(elf, ".debug_str");
            LongFunction<String> compDirs = new LongFunction<>() {
                private Map<Long, String> dirs;

                @Override
                public String apply(long offset) {
                    // read only when a DWARF 4 unit asks: DWARF 5 tables name their directory themselves
                    if (dirs == null) dirs = compDirs(elf);
                    return dirs.get(offset);
                }
            };
            LineTable table = parse(elf.contentsOf(line.get()), lineStr, str,
                    a -> code.stream().anyMatch(s -> s.isLoad() && s.isExecutable() && s.contains(a)), compDirs);
            return table.problem().map(p -> LineTable.unavailable(elf.path() + ": " + p)).orElse(table);
        } catch (ElfFormatException e) {
            return LineTable.unavailable(e.getMessage());
        } catch (RuntimeException e) {
            // The parser checks every read; this is the net under a mistake of its own, not an expected path.
            return LineTable.unavailable(elf.path() + ": .debug_line: " + e);
        }
    }

    /** The units' compilation directories by line-table offset ({@link DwarfCompDirs}); none when unreadable. */
    private static Map<Long, String> compDirs(ElfFile elf) {
        try {
            return DwarfCompDirs.read(DwarfSections.read(elf));
        } catch (ElfFormatException e) {
            return Map.of();
        }
    }

    /** Parses the sections' bytes; {@code keep} says which sequence start addresses belong to code. */
    static LineTable parse(ByteBuffer line, ByteBuffer lineStr, ByteBuffer str, LongPredicate keep) {
        return parse(line, lineStr, str, keep, offset -> null);
    }

    /**
     * As above, with {@code compDirs} giving a DWARF 4 unit's compilation directory by the unit's offset (null:
     * unknown), which its table leaves implicit and {@link LineTable#location} then joins.
     */
    static LineTable parse(ByteBuffer line, ByteBuffer lineStr, ByteBuffer str, LongPredicate keep, LongFunction<String> compDirs) {
        LineRows rows = new LineRows();
        DwarfCursor c = new DwarfCursor(line.slice().order(ByteOrder.LITTLE_ENDIAN));
        int unitStart = 0;
        try {
            while (c.position < c.limit) {
                unitStart = c.position;
                new Unit(c, lineStr.slice(), str.slice(), rows, compDirs).run();
            }
        } catch (DwarfException e) {
            return LineTable.unavailable(".debug_line unit at offset 0x" + Integer.toHexString(unitStart) + ": " + e.getMessage());
        }
        return rows.build(keep);
    }

    /**
     * The file names of the line-table unit at {@code offset} (a compilation unit's {@code DW_AT_stmt_list}),
     * by file index as {@code DW_AT_call_file} counts them, spelled as {@link LineTable} spells them; null
     * where an index names no file. Reads the unit's header only.
     */
    static String[] fileNames(ByteBuffer line, ByteBuffer lineStr, ByteBuffer str, long offset) throws DwarfException {
        DwarfCursor c = new DwarfCursor(line.slice().order(ByteOrder.LITTLE_ENDIAN));
        if (offset < 0 || offset >= c.limit) throw new DwarfException("line table offset 0x" + Long.toHexString(offset) + " outside .debug_line");
        c.position = (int) offset;
        Unit u = new Unit(c, lineStr.slice(), str.slice(), null, o -> null);
        u.run();
        String[] names = new String[u.fileNames.size()];
        for (int i = 0; i < names.length; i++) names[i] = u.fileNames.get(i) == null ? null : u.displayName(i);
        return names;
    }

    /** One unit: its header (directories, files, opcode parameters) and its line program (skipped without rows). */
    private static final class Unit {
        private final DwarfCursor c;
        private final ByteBuffer lineStr;
        private final ByteBuffer str;
        private final LineRows rows;
        private final LongFunction<String> compDirs;
        private final List<String> directories = new ArrayList<>();
        /** Per file entry: its name and directory index; resolved into the global file table on first use. */
        private final List<String> fileNames = new ArrayList<>();
        private final List<Long> fileDirectories = new ArrayList<>();
        private int[] globalFile = new int[0];
        private int version;
        private boolean offset64;

        Unit(DwarfCursor c, ByteBuffer lineStr, ByteBuffer str, LineRows rows, LongFunction<String> compDirs) {
            this.c = c;
            this.compDirs = compDirs;
            this.lineStr = lineStr;
            this.str = str;
            this.rows = rows;
        }

        void run() throws DwarfException {
            int unitOffset = c.position;
            long length = c.u32();
            if (length == 0xffffffffL) {
                offset64 = true;
                length = c.u64();
            } else if (length >= 0xfffffff0L) {
                throw new DwarfException("reserved unit length 0x" + Long.toHexString(length));
            }
            int end = c.end(length, "unit");
            c.limit(end);
            version = c.u16();
            if (version < 2 || version > 5) throw new DwarfException("version " + version + " is not 2 to 5");
            int addressSize = 8;
            if (version >= 5) {
                addressSize = c.u8();
                int segmentSelectorSize = c.u8();
                if (segmentSelectorSize != 0) throw new DwarfException("segment selectors are not supported");
            }
            long headerLength = offset64 ? c.u64() : c.u32();
            int programStart = c.end(headerLength, "header");
            c.limit(programStart);
            int minInstructionLength = c.u8();
            int maxOpsPerInstruction = version >= 4 ? c.u8() : 1;
            if (maxOpsPerInstruction != 1) throw new DwarfException("VLIW line programs (" + maxOpsPerInstruction + " ops per instruction) are not supported");
            c.u8(); // default_is_stmt: every row counts (see the class comment)
            int lineBase = (byte) c.u8();
            int lineRange = c.u8();
            if (lineRange == 0) throw new DwarfException("line range 0");
            int opcodeBase = c.u8();
            if (opcodeBase == 0) throw new DwarfException("opcode base 0");
            int[] argumentCounts = new int[opcodeBase];
            for (int i = 1; i < opcodeBase; i++) argumentCounts[i] = c.u8();
            if (version >= 5) {
                readEntries(true, addressSize);
                readEntries(false, addressSize);
            } else {
                // DWARF 4 and earlier: directory 0 is the compilation directory, implicit (the unit DIE's
                // DW_AT_comp_dir, when .debug_info gives it); files count from 1.
                String compDir = compDirs.apply(unitOffset);
                directories.add(compDir == null ? "" : compDir);
                for (String d = c.cString(); !d.isEmpty(); d = c.cString()) directories.add(d);
                fileNames.add(null);
                fileDirectories.add(0L);
                for (String f = c.cString(); !f.isEmpty(); f = c.cString()) addV4File(f);
            }
            c.position = programStart;
            c.limit(end);
            if (rows == null) {
                c.restoreLimit();
                c.position = end;
                return;
            }
            program(minInstructionLength, lineBase, lineRange, opcodeBase, argumentCounts, addressSize);
            c.restoreLimit();
            c.position = end;
        }

        private void addV4File(String name) throws DwarfException {
            fileNames.add(name);
            fileDirectories.add(c.uleb());
            c.uleb();
            c.uleb();
        }

        /** A DWARF 5 directory or file table: entry formats, then the entries. */
        private void readEntries(boolean directoriesTable, int addressSize) throws DwarfException {
            int formatCount = c.u8();
            long[] contentTypes = new long[formatCount];
            int[] forms = new int[formatCount];
            for (int i = 0; i < formatCount; i++) {
                contentTypes[i] = c.uleb();
                long form = c.uleb();
                if (form > 0xffff) throw new DwarfException("form 0x" + Long.toHexString(form));
                forms[i] = (int) form;
            }
            long count = c.uleb();
            if (count > c.limit - c.position) throw new DwarfException(count + " entries cannot fit the header");
            for (long n = 0; n < count; n++) {
                String path = null;
                long directory = 0;
                for (int i = 0; i < formatCount; i++) {
                    if (contentTypes[i] == DW_LNCT_PATH) path = stringForm(forms[i]);
                    else if (contentTypes[i] == DW_LNCT_DIRECTORY_INDEX) directory = numberForm(forms[i]);
                    else skipForm(forms[i], addressSize);
                }
                if (path == null) throw new DwarfException((directoriesTable ? "directory" : "file") + " entry " + n + " has no path");
                if (directoriesTable) {
                    directories.add(path);
                } else {
                    fileNames.add(path);
                    fileDirectories.add(directory);
                }
            }
        }

        private String stringForm(int form) throws DwarfException {
            return switch (form) {
                case FORM_STRING -> c.cString();
                case FORM_LINE_STRP -> DwarfCursor.stringAt(lineStr, offset(), ".debug_line_str");
                case FORM_STRP -> DwarfCursor.stringAt(str, offset(), ".debug_str");
                default -> throw new DwarfException("path in form 0x" + Integer.toHexString(form) + " is not supported");
            };
        }

        private long numberForm(int form) throws DwarfException {
            return switch (form) {
                case FORM_DATA1 -> c.u8();
                case FORM_DATA2 -> c.u16();
                case FORM_DATA4 -> c.u32();
                case FORM_DATA8 -> c.u64();
                case FORM_UDATA -> c.uleb();
                default -> throw new DwarfException("directory index in form 0x" + Integer.toHexString(form) + " is not supported");
            };
        }

        /** Timestamps, sizes, MD5 sums and vendor content: read past them. */
        private void skipForm(int form, int addressSize) throws DwarfException {
            switch (form) {
                case FORM_DATA1 -> c.skip(1);
                case FORM_DATA2 -> c.skip(2);
                case FORM_DATA4 -> c.skip(4);
                case FORM_DATA8 -> c.skip(8);
                case FORM_DATA16 -> c.skip(16);
                case FORM_UDATA -> c.uleb();
                case FORM_SDATA -> c.sleb();
                case FORM_STRING -> c.cString();
                case FORM_LINE_STRP, FORM_STRP -> offset();
                case FORM_BLOCK1 -> c.skip(c.u8());
                case FORM_BLOCK2 -> c.skip(c.u16());
                case FORM_BLOCK4 -> c.skip(c.u32());
                case FORM_BLOCK -> c.skip(c.uleb());
                default -> throw new DwarfException("entry form 0x" + Integer.toHexString(form) + " is not supported (address size " + addressSize + ")");
            }
        }

        private long offset() throws DwarfException {
            return offset64 ? c.u64() : c.u32();
        }

        private void program(int minInstructionLength, int lineBase, int lineRange, int opcodeBase,
                             int[] argumentCounts, int addressSize) throws DwarfException {
            long address = 0;
            long file = 1;
            long line = 1;
            while (c.position < c.limit) {
                int opcode = c.u8();
                if (opcode >= opcodeBase) {
                    int adjusted = opcode - opcodeBase;
                    address += (long) (adjusted / lineRange) * minInstructionLength;
                    line += lineBase + adjusted % lineRange;
                    rows.add(address, file(file), line);
                } else if (opcode == 0) {
                    long length = c.uleb();
                    int end = c.end(length, "extended opcode");
                    if (length == 0) throw new DwarfException("empty extended opcode");
                    int sub = c.u8();
                    switch (sub) {
                        case DW_LNE_END_SEQUENCE -> {
                            rows.endSequence(address);
                            address = 0;
                            file = 1;
                            line = 1;
                        }
                        case DW_LNE_SET_ADDRESS -> {
                            if (length - 1 != addressSize || addressSize != 8) throw new DwarfException("address of " + (length - 1) + " bytes");
                            address = c.u64();
                        }
                        case DW_LNE_DEFINE_FILE -> addV4File(c.cString());
                        default -> { }
                    }
                    if (c.position > end) throw new DwarfException("extended opcode " + sub + " overruns its length");
                    c.position = end;
                } else {
                    // The known opcodes take DWARF's operands whatever the header declares; the declared
                    // counts serve to skip the opcodes this reader does not know.
                    switch (opcode) {
                        case DW_LNS_COPY -> rows.add(address, file(file), line);
                        case DW_LNS_ADVANCE_PC -> address += c.uleb() * minInstructionLength;
                        case DW_LNS_ADVANCE_LINE -> line += c.sleb();
                        case DW_LNS_SET_FILE -> file = c.uleb();
                        case DW_LNS_SET_COLUMN -> c.uleb();
                        case DW_LNS_NEGATE_STMT, DW_LNS_SET_BASIC_BLOCK, DW_LNS_SET_PROLOGUE_END, DW_LNS_SET_EPILOGUE_BEGIN -> { }
                        case DW_LNS_CONST_ADD_PC -> address += (long) ((255 - opcodeBase) / lineRange) * minInstructionLength;
                        case DW_LNS_FIXED_ADVANCE_PC -> address += c.u16();
                        case DW_LNS_SET_ISA -> c.uleb();
                        default -> {
                            for (int i = 0; i < argumentCounts[opcode]; i++) c.uleb();
                        }
                    }
                }
                if (line < 0 || line > Integer.MAX_VALUE) throw new DwarfException("line " + line + " out of range");
            }
            if (!rows.sequenceClosed()) throw new DwarfException("line program ends inside a sequence");
        }

        /** The global index of a file entry, resolving its path on first use. */
        private int file(long index) throws DwarfException {
            if (index < 0 || index >= fileNames.size() || fileNames.get((int) index) == null) {
                throw new DwarfException("row names file " + index + " of " + (fileNames.size() - (version >= 5 ? 0 : 1)));
            }
            int i = (int) index;
            if (globalFile.length <= i) {
                int old = globalFile.length;
                globalFile = Arrays.copyOf(globalFile, fileNames.size());
                Arrays.fill(globalFile, old, globalFile.length, -1);
            }
            if (globalFile[i] < 0) globalFile[i] = rows.fileIndex(displayName(i), location(i));
            return globalFile[i];
        }

        /**
         * Where the file lies when its name is relative and the compilation directory (DWARF 5's directory 0,
         * DW_AT_comp_dir) is absolute: the two joined, as addr2line prints it, so that its source is found from
         * any working directory; null otherwise (a DWARF 4 table leaves the compilation directory to the unit's
         * DW_AT_comp_dir: without it, null).
         */
        private String location(int i) throws DwarfException {
            String name = displayName(i);
            if (name.startsWith("/") || directories.isEmpty() || !directories.getFirst().startsWith("/")) return null;
            return normalize(join(directories.getFirst(), name));
        }

        /**
         * The file's name as compiled: its directory joined when that is not the compilation directory (entry
         * 0) and the name is relative. When the compilation directory itself is relative (a distribution that
         * mapped its build prefix away), it is joined too, so the name is a path within the source tree.
         */
        private String displayName(int i) throws DwarfException {
            String name = fileNames.get(i);
            long d = fileDirectories.get(i);
            if (d < 0 || d >= directories.size()) throw new DwarfException("file " + i + " names directory " + d + " of " + directories.size());
            if (name.startsWith("/")) return normalize(name);
            String compilation = directories.isEmpty() ? "" : directories.getFirst();
            String joined = d == 0 ? name : join(directories.get((int) d), name);
            if (!joined.startsWith("/") && !compilation.isEmpty() && !compilation.startsWith("/")) joined = join(compilation, joined);
            return normalize(joined);
        }

        private static String join(String directory, String name) {
            if (directory.isEmpty() || name.startsWith("/")) return name;
            return directory.endsWith("/") ? directory + name : directory + '/' + name;
        }
    }

    /**
     * Removes {@code .} components and {@code dir/..} pairs, keeping leading {@code ..}; lexical only, as a
     * programmer reads the path (a symbolic link can make that differ from what the file system says).
     */
    static String normalize(String path) {
        boolean absolute = path.startsWith("/");
        List<String> parts = new ArrayList<>();
        for (String p : path.split("/")) {
            if (p.isEmpty() || p.equals(".")) continue;
            if (p.equals("..") && !parts.isEmpty() && !parts.getLast().equals("..")) {
                parts.removeLast();
            } else if (!(p.equals("..") && absolute && parts.isEmpty())) {
                parts.add(p);
            }
        }
        String joined = String.join("/", parts);
        return absolute ? "/" + joined : joined.isEmpty() ? "." : joined;
    }
}
