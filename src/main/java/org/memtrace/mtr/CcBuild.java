package org.memtrace.mtr;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Optional;
import java.util.TreeSet;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfFormatException;
import org.memtrace.symbols.ElfSection;
import org.memtrace.symbols.ElfSymbol;

/**
 * What an ELF file built by {@code memtrace cc} says about its build, as static analysis needs it: where
 * its probes' sites are and which instructions they record (from {@code memtrace_sites}), and the options
 * of the build (section {@code memtrace_cc}). Works on relocatable objects too, whose site table is all
 * relocations: the run-time reader ({@link SiteTable}) only ever sees linked files.
 *
 * @param options      the recorded option strings ({@code memtrace cc --omega 0.25 …}), one per distinct set
 *                     the linked objects were built with; empty when the build did not record them
 * @param sites        addresses of every probe site in {@code .text} (the {@code lea} of each recorded address)
 * @param instructions the instructions in {@code .text} that probes record an access or rep operand of (but
 *                     GOT loads: no memory reference of the selection)
 * @param skeleton     the build has skeleton loops: their computed accesses are recorded by no site
 */
public record CcBuild(List<String> options, NavigableSet<Long> sites, NavigableSet<Long> instructions, boolean skeleton) {
    static final String OPTIONS_SECTION = "memtrace_cc";
    private static final int R_X86_64_PC32 = 2;

    public CcBuild {
        options = List.copyOf(options);
        sites = Collections.unmodifiableNavigableSet(new TreeSet<>(sites));
        instructions = Collections.unmodifiableNavigableSet(new TreeSet<>(instructions));
    }

    /**
     * The build of {@code elf}, whose code {@code text} is; empty when the file has no site table (it was not
     * built by memtrace cc, or no probe was written). Addresses are link-time addresses, or for a relocatable
     * object offsets from {@code text}'s address as {@code ElfText} counts them.
     */
    public static Optional<CcBuild> of(ElfFile elf, ElfSection text) throws MtrFormatException {
        ElfSection table = elf.section(SiteTable.SECTION).orElse(null);
        if (table == null) {
            return Optional.empty();
        }
        try {
            byte[] bytes = elf.contents(table);
            if (bytes.length % SiteTable.ENTRY_SIZE != 0) {
                throw new MtrFormatException(elf.path() + ": the " + SiteTable.SECTION + " section is " + bytes.length
                        + " bytes, not whole 24-byte entries");
            }
            ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
            Map<Long, Long> relocated = elf.type() == ElfFile.ET_REL ? targets(elf, table, text) : null;
            var sites = new TreeSet<Long>();
            var instructions = new TreeSet<Long>();
            for (int at = 0; at < bytes.length; at += SiteTable.ENTRY_SIZE) {
                int kind = Byte.toUnsignedInt(b.get(at + 8));
                Long probe = target(relocated, table, b, at);
                Long insn = target(relocated, table, b, at + 4);
                if (probe != null) {
                    sites.add(probe);
                }
                boolean linkedOnly = (Byte.toUnsignedInt(b.get(at + 11)) & SiteTable.FLAG_KEPT_WHERE_LINKED) != 0;
                boolean relaxed = linkedOnly && relocated == null && insn != null
                        && !LinkedCode.stillAccesses(kind, elf.bytesAt(insn, 15));
                // a GOT load is no memory reference of the selection, kept by the link or not
                boolean got = linkedOnly && kind == SiteTable.KIND_LOAD;
                if (insn != null && kind >= SiteTable.KIND_LOAD && kind <= SiteTable.KIND_REP_COUNT && !relaxed && !got) {
                    instructions.add(insn);
                }
            }
            return Optional.of(new CcBuild(options(elf), sites, instructions, elf.section(SkeletonTable.SECTION).isPresent()));
        } catch (ElfFormatException e) {
            throw new MtrFormatException(elf.path() + ": " + e.getMessage());
        }
    }

    /**
     * Where the PC-relative field at {@code at} points; null when it points outside {@code .text} (in a
     * relocatable object: a relocation against another section, e.g. {@code main} in {@code .text.startup}).
     */
    private static Long target(Map<Long, Long> relocated, ElfSection table, ByteBuffer b, int at) {
        if (relocated == null) {
            return table.address() + at + b.getInt(at);
        }
        return relocated.get((long) at);
    }

    /**
     * The fields of a relocatable object's site table, by offset in the table: each is a PC32 relocation
     * S + A - P, so the place it names is S + A, kept when S lies in {@code text}.
     */
    private static Map<Long, Long> targets(ElfFile elf, ElfSection table, ElfSection text) throws ElfFormatException,
            MtrFormatException {
        int tableIndex = elf.sections().indexOf(table);
        int textIndex = elf.sections().indexOf(text);
        List<ElfSymbol> symbols = elf.symtab();
        Map<Long, Long> result = new HashMap<>();
        for (ElfSection rela : elf.sections()) {
            if (rela.type() != ElfSection.SHT_RELA || rela.info() != tableIndex) {
                continue;
            }
            ByteBuffer r = ByteBuffer.wrap(elf.contents(rela)).order(ByteOrder.LITTLE_ENDIAN);
            for (int at = 0; at + 24 <= r.capacity(); at += 24) {
                long info = r.getLong(at + 8);
                int symbol = (int) (info >>> 32);
                if ((int) info != R_X86_64_PC32 || symbol >= symbols.size()) {
                    throw new MtrFormatException(elf.path() + ": relocation " + at / 24 + " of " + SiteTable.SECTION
                            + " is not a PC32 relocation against a known symbol");
                }
                ElfSymbol s = symbols.get(symbol);
                if (s.sectionIndex() == textIndex) {
                    result.put(r.getLong(at), text.address() + s.value() + r.getLong(at + 16));
                }
            }
        }
        return result;
    }

    /** The NUL-terminated strings of {@code memtrace_cc}, in file order, each once: the options the build recorded. */
    public static List<String> options(ElfFile elf) throws ElfFormatException {
        ElfSection section = elf.section(OPTIONS_SECTION).orElse(null);
        if (section == null) {
            return List.of();
        }
        byte[] bytes = elf.contents(section);
        var result = new ArrayList<String>();
        int start = 0;
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] == 0) {
                String s = new String(bytes, start, i - start, StandardCharsets.UTF_8);
                if (!s.isEmpty() && !result.contains(s)) {
                    result.add(s);
                }
                start = i + 1;
            }
        }
        return result;
    }
}
