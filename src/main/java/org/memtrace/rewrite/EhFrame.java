package org.memtrace.rewrite;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfFormatException;
import org.memtrace.symbols.ElfSection;

/**
 * The function bounds a module's {@code .eh_frame} gives, symbol table or not (docs/rewriting.md, "Short
 * instructions"): one range per FDE, {@code [start, end)} at link-time addresses, and the landing pads of its
 * language-specific data area (the LSDA in {@code .gcc_except_table}: C++ catch and cleanup code, C cleanups of
 * {@code -fexceptions} code), which the unwinder enters at places no branch names. Every function gcc
 * compiles and every glibc assembly routine ({@code ENTRY}/{@code END} carry {@code cfi_startproc}/
 * {@code cfi_endproc}) has an FDE; code without CFI has none and gets no range.
 *
 * <p>What it gets wrong: a record it cannot read (an unknown pointer encoding, a truncated section) ends the
 * walk, and the FDEs read up to there are all it returns — fewer ranges, so fewer moves, never a wrong one.
 * An LSDA it cannot read (outside {@code .gcc_except_table}, an unknown encoding) makes its FDE opaque.
 */
record EhFrame(List<Fde> fdes) {
    /**
     * One FDE: the code it describes, its landing pads, and whether it has an LSDA whose landing pads could not
     * be read (then anything in it may be entered by the unwinder); {@code padded}, the call-site ranges that
     * have a landing pad (an unwinder leaving from an instruction there enters one; DeadRegisters).
     */
    record Fde(long start, long end, List<Long> landingPads, boolean opaque, List<Range> padded) {
        Fde {
            landingPads = List.copyOf(landingPads);
            padded = List.copyOf(padded);
        }
    }

    /** Code from {@code start} to {@code end}. */
    record Range(long start, long end) {}

    private static final int DW_EH_PE_OMIT = 0xff;

    /** The FDEs of {@code elf}'s {@code .eh_frame}; none when it has no such section. */
    static EhFrame of(ElfFile elf) throws ElfFormatException {
        Optional<ElfSection> s = elf.section(".eh_frame");
        if (s.isEmpty() || s.get().type() == ElfSection.SHT_NOBITS) return new EhFrame(List.of());
        Optional<ElfSection> t = elf.section(".gcc_except_table");
        byte[] table = t.isPresent() && t.get().type() != ElfSection.SHT_NOBITS ? elf.contents(t.get()) : new byte[0];
        return parse(elf.contents(s.get()), s.get().address(), table, t.map(ElfSection::address).orElse(0L));
    }

    /**
     * The FDEs of an {@code .eh_frame} section's {@code bytes}, loaded at {@code address}, their LSDAs read from
     * {@code table} ({@code .gcc_except_table}'s bytes) at {@code tableAddress}.
     */
    static EhFrame parse(byte[] bytes, long address, byte[] table, long tableAddress) {
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        Map<Integer, Cie> cies = new HashMap<>();
        List<Fde> out = new ArrayList<>();
        try {
            int at = 0;
            while (at + 4 <= bytes.length) {
                long length = Integer.toUnsignedLong(b.getInt(at));
                if (length == 0) break; // the terminator
                int idAt = at + 4;
                if (length == 0xffffffffL) {
                    length = b.getLong(at + 4);
                    idAt = at + 12;
                }
                int next = Math.toIntExact(idAt + length);
                if (next > bytes.length || next <= at) break;
                int id = b.getInt(idAt);
                if (id == 0) {
                    cies.put(at, cie(b, idAt + 4, next));
                } else {
                    Cie cie = cies.get(idAt - id);
                    if (cie == null) break;
                    b.position(idAt + 4);
                    long start = pointer(b, cie.fdeEncoding, address);
                    long range = pointer(b, cie.fdeEncoding & 0x0f, address);
                    List<Long> pads = List.of();
                    List<Range> padded = new ArrayList<>();
                    boolean opaque = false;
                    if (cie.augmented) {
                        long augLength = uleb(b);
                        int data = b.position();
                        if (cie.lsdaEncoding != DW_EH_PE_OMIT) {
                            // the raw value, before pc-relative resolution: 0 says "no LSDA"
                            boolean lsda = pointer(b, cie.lsdaEncoding & 0x0f, address) != 0;
                            b.position(data);
                            long lsdaAddress = pointer(b, cie.lsdaEncoding, address);
                            if (lsda) {
                                pads = landingPads(table, tableAddress, lsdaAddress, start, padded);
                                opaque = pads == null;
                            }
                        }
                        b.position(Math.toIntExact(data + augLength));
                    }
                    if (start != 0 && range > 0) out.add(new Fde(start, start + range, pads == null ? List.of() : pads, opaque, padded));
                }
                at = next;
            }
        } catch (RuntimeException e) {
            // a record this reader does not understand: keep what came before (fewer ranges, fewer moves)
        }
        return new EhFrame(List.copyOf(out));
    }

    /**
     * The landing pads an LSDA at {@code lsda} names (its call-site table's non-zero landing pad fields, from
     * its {@code lpstart}, by default the function's {@code start}); null when it cannot be read. The call
     * sites that have one go to {@code ranges} (from the function's {@code start}).
     */
    static List<Long> landingPads(byte[] table, long tableAddress, long lsda, long start, List<Range> ranges) {
        if (lsda < tableAddress || lsda >= tableAddress + table.length) return null;
        ByteBuffer b = ByteBuffer.wrap(table).order(ByteOrder.LITTLE_ENDIAN);
        try {
            b.position(Math.toIntExact(lsda - tableAddress));
            int lpEncoding = Byte.toUnsignedInt(b.get());
            long lpStart = lpEncoding == DW_EH_PE_OMIT ? start : pointer(b, lpEncoding, tableAddress);
            int typeEncoding = Byte.toUnsignedInt(b.get());
            if (typeEncoding != DW_EH_PE_OMIT) uleb(b);
            int siteEncoding = Byte.toUnsignedInt(b.get());
            if ((siteEncoding & 0x70) != 0) return null; // offsets from lpstart: never pc-relative in practice
            long length = uleb(b);
            long end = b.position() + length;
            List<Long> pads = new ArrayList<>();
            while (b.position() < end) {
                long site = pointer(b, siteEncoding, tableAddress), span = pointer(b, siteEncoding, tableAddress);
                long pad = pointer(b, siteEncoding, tableAddress);
                uleb(b); // its action
                if (pad != 0) {
                    pads.add(lpStart + pad);
                    ranges.add(new Range(start + site, start + site + span));
                }
            }
            return b.position() == end ? pads : null;
        } catch (RuntimeException e) {
            return null;
        }
    }

    /**
     * A CIE's header: its alignment factors, whether it is augmented ('z'), its FDEs' pointer encoding and LSDA
     * encoding, and where its initial instructions start ({@code insnStart}) and end ({@code insnEnd}). One reader
     * for the landing pads here and the CFA rows of {@link CfaRows}.
     */
    record Cie(long codeAlign, long dataAlign, boolean augmented, int fdeEncoding, int lsdaEncoding, int insnStart, int insnEnd) {}

    /** The CIE whose version byte is at {@code at} and whose record ends at {@code end}. */
    static Cie cie(ByteBuffer b, int at, int end) {
        b.position(at);
        int version = Byte.toUnsignedInt(b.get());
        var aug = new StringBuilder();
        for (int c; (c = b.get()) != 0; ) aug.append((char) c);
        String augmentation = aug.toString();
        if (augmentation.contains("eh")) b.getLong();
        long codeAlign = uleb(b), dataAlign = sleb(b);
        if (version == 1) b.get(); else uleb(b); // return address register
        int fde = 0, lsda = DW_EH_PE_OMIT;
        boolean z = augmentation.startsWith("z");
        if (z) {
            long len = uleb(b);
            int data = b.position();
            for (char c : augmentation.substring(1).toCharArray()) {
                switch (c) {
                    case 'R' -> fde = Byte.toUnsignedInt(b.get());
                    case 'L' -> lsda = Byte.toUnsignedInt(b.get());
                    case 'P' -> pointer(b, Byte.toUnsignedInt(b.get()), 0);
                    case 'S', 'B', 'G' -> { }
                    default -> throw new IllegalArgumentException("augmentation " + augmentation);
                }
            }
            b.position(Math.toIntExact(data + len));
        }
        return new Cie(codeAlign, dataAlign, z, fde, lsda, b.position(), end);
    }

    /** A pointer of DWARF encoding {@code enc} read at the buffer's position, pc-relative ones resolved. */
    static long pointer(ByteBuffer b, int enc, long sectionAddress) {
        if (enc == DW_EH_PE_OMIT) return 0;
        long here = sectionAddress + b.position();
        long v = switch (enc & 0x0f) {
            case 0x00, 0x04, 0x0c -> b.getLong();
            case 0x01 -> uleb(b);
            case 0x02 -> Short.toUnsignedLong(b.getShort());
            case 0x03 -> Integer.toUnsignedLong(b.getInt());
            case 0x09 -> sleb(b);
            case 0x0a -> b.getShort();
            case 0x0b -> b.getInt();
            default -> throw new IllegalArgumentException("pointer encoding " + enc);
        };
        return switch (enc & 0x70) {
            case 0x00 -> v;
            case 0x10 -> v + here;
            default -> throw new IllegalArgumentException("pointer encoding " + enc); // textrel, datarel, funcrel: not in x86-64 .eh_frame
        };
    }

    static long uleb(ByteBuffer b) {
        long v = 0;
        for (int shift = 0; ; shift += 7) {
            int c = Byte.toUnsignedInt(b.get());
            v |= (long) (c & 0x7f) << shift;
            if ((c & 0x80) == 0) return v;
        }
    }

    static long sleb(ByteBuffer b) {
        long v = 0;
        int shift = 0, c;
        do {
            c = Byte.toUnsignedInt(b.get());
            v |= (long) (c & 0x7f) << shift;
            shift += 7;
        } while ((c & 0x80) != 0);
        return shift < 64 && (c & 0x40) != 0 ? v | -1L << shift : v;
    }
}
