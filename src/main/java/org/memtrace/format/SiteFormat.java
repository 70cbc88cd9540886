package org.memtrace.format;

import java.nio.ByteBuffer;

/**
 * The {@code memtrace_sites} section (docs/compiled-in.md, "The site table"): one 24-byte little-endian entry per
 * probe record, {@code i32 probe − here, i32 instruction − (here + 4), u8 kind, u8 size, u8 access, u8 flags,
 * u16 weightMa, weightAia, blockRefs, blockMa, blockAia, u16 0}. The rewriters write it with {@link #directives},
 * the reader takes it back with {@link #decode}; nothing else knows the layout.
 */
public final class SiteFormat {
    private SiteFormat() {}

    public static final String SECTION = "memtrace_sites";
    public static final int ENTRY_SIZE = 24;

    /** Kinds 1–3: an access; 4–6: a rep string instruction's operand (destination, source, count). */
    public static final int LOAD = 1, STORE = 2, MODIFY = 3, REP_DESTINATION = 4, REP_SOURCE = 5, REP_COUNT = 6;
    /** Kinds 7–9: a skeleton loop's records ({@link SkeletonFormat}): a register's value at entry, the exit, a marker. */
    public static final int VALUE = 7, EXIT = 8, MARKER = 9;
    /** The first and the last kind a reader knows. */
    public static final int FIRST_KIND = LOAD, LAST_KIND = MARKER;

    /** An access of the stack the instruction does without naming it (push, call). */
    public static final int FLAG_IMPLICIT_STACK = 0x01;
    /** The first site of its basic block: its entry carries the block's counts. */
    public static final int FLAG_BLOCK_START = 0x02;
    /** A rep string instruction whose run the flags may end early (repe/repne cmps, scas). */
    public static final int FLAG_CONDITIONAL_REP = 0x10;
    /** Not recorded but replayed from a skeleton loop (set by the reader, never written). */
    public static final int FLAG_COMPUTED = 0x20;
    /**
     * An access the link may take away, kept only where the linked code still does it: the push of a TLS
     * resolver call (recorded before the call's {@code lea}) or a {@code @GOTPCREL} load.
     */
    public static final int FLAG_KEPT_WHERE_LINKED = 0x40;

    /** Whether {@code kind} is an operand of a rep string instruction. */
    public static boolean rep(int kind) { return kind >= REP_DESTINATION && kind <= REP_COUNT; }

    /** Whether {@code kind} is a skeleton loop's record, which names a loop of the skeleton section. */
    public static boolean skeleton(int kind) { return kind >= VALUE && kind <= MARKER; }

    /**
     * One entry at link-time addresses: {@code probe} where the probe's record is made, {@code insn} the
     * instruction it stands for (for a skeleton record, the label of its loop's entry, exit or marker).
     */
    public record Entry(long probe, long insn, int kind, int size, int access, int flags, int weightMa, int weightAia,
                        int blockRefs, int blockMa, int blockAia) {}

    /**
     * The assembler directives of one entry: {@code probe} and {@code insn} are the labels (or label
     * expressions) the two offsets are taken from, at this entry's place.
     */
    public static String directives(String probe, String insn, int kind, int size, int access, int flags, int weightMa,
                                    int weightAia, int blockRefs, int blockMa, int blockAia) {
        return "\t.long " + probe + "-.\n\t.long " + insn + "-.\n\t.byte " + kind + ", " + size + ", " + access + ", " + flags
                + "\n\t.short " + weightMa + ", " + weightAia + ", " + blockRefs + ", " + blockMa + ", " + blockAia + ", 0\n";
    }

    /** The entry at offset {@code at} of the section's bytes {@code b} (little-endian), the section at {@code address}. */
    public static Entry decode(ByteBuffer b, int at, long address) {
        long here = address + at;
        return new Entry(here + b.getInt(at), here + 4 + b.getInt(at + 4), u8(b, at + 8), u8(b, at + 9), u8(b, at + 10),
                u8(b, at + 11), u16(b, at + 12), u16(b, at + 14), u16(b, at + 16), u16(b, at + 18), u16(b, at + 20));
    }

    static int u8(ByteBuffer b, int at) { return Byte.toUnsignedInt(b.get(at)); }

    static int u16(ByteBuffer b, int at) { return Short.toUnsignedInt(b.getShort(at)); }
}
