package org.memtrace.format;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The entries of a {@code memtrace_skel} record (docs/compiled-in.md, "The {@code memtrace_skel} section"), each
 * as one record with its encoder (the assembler directives {@code instrument.SkeletonWriter} writes) beside its
 * decoder (what {@code mtr.SkeletonTable} reads), so that the two cannot place a field differently: a loop
 * record is its {@link Head}, a {@link Slot} per logged register, an {@link Item} per body position, a
 * {@link Marker} per conditional block or side exit, the {@link Tail} of types 4 and 5, the computed conditions
 * ({@link SkeletonFormat#directives}) and, for a nested loop, its {@link Value}s. All little-endian; an offset
 * named by a label is taken from the field's own place ({@code label-.}).
 */
public final class SkeletonEntries {
    private SkeletonEntries() {}

    /**
     * A loop record's fixed head ({@link SkeletonFormat#LOOP_HEAD_SIZE} bytes): u8 type (with
     * {@link SkeletonFormat#RECORD_NESTED}), u8 slots, u8 trip slot, u8 markers, u32 body positions, i32 entry
     * label − here, i32 exit label − here. Read back, {@code entry} and {@code exit} are the labels' addresses.
     */
    public record Head(int type, boolean nested, int slots, int tripSlot, int markers, int items, long entry, long exit) {}

    public static String directives(Head h, String entryLabel, String exitLabel) {
        return "\t.byte " + (h.type() | (h.nested() ? SkeletonFormat.RECORD_NESTED : 0)) + ", " + h.slots() + ", " + h.tripSlot()
                + ", " + h.markers() + "\n\t.long " + h.items() + "\n\t.long " + entryLabel + "-.\n\t.long " + exitLabel + "-.\n";
    }

    /** The head at offset {@code at} of the section's bytes {@code b}, the section at {@code address}. */
    public static Head decodeHead(ByteBuffer b, int at, long address) {
        int type = u8(b, at);
        long here = address + at;
        return new Head(type & ~SkeletonFormat.RECORD_NESTED, (type & SkeletonFormat.RECORD_NESTED) != 0, u8(b, at + 1),
                u8(b, at + 2), u8(b, at + 3), b.getInt(at + 4), here + 8 + b.getInt(at + 8), here + 12 + b.getInt(at + 12));
    }

    /**
     * One logged register ({@link SkeletonFormat#SLOT_SIZE} bytes): i64 constant step per iteration, u8 the slot
     * whose value is added to it ({@link SkeletonFormat#NONE}: none), and the register's name in
     * {@link SkeletonFormat#NAME_SIZE} bytes, zero padded (the section stays readable in a hex dump).
     */
    public record Slot(long step, int stepSlot, String register) {}

    public static String directives(Slot s) {
        return "\t.quad " + s.step() + "\n\t.byte " + s.stepSlot() + "\n\t.ascii \"" + s.register()
                + "\\0".repeat(SkeletonFormat.NAME_SIZE - s.register().length()) + "\"\n";
    }

    public static Slot decodeSlot(ByteBuffer b, int at) {
        int n = 0;
        while (n < SkeletonFormat.NAME_SIZE && b.get(at + 9 + n) != 0) n++;
        byte[] name = new byte[n];
        b.get(at + 9, name);
        return new Slot(b.getLong(at), u8(b, at + 8), new String(name, StandardCharsets.US_ASCII));
    }

    /**
     * One body position ({@link SkeletonFormat#ITEM_SIZE} bytes): i32 instruction label − here; u8 kind (0 a
     * logged site, 1–3 a computed access, {@link SkeletonFormat#ITEM_NESTED} an inner loop's run), size, access,
     * flags; u16 weightMa, weightAia, blockRefs, blockMa, blockAia; u8 baseSlot, indexSlot, scale, phase, cond,
     * call (bit 0); i64 displacement (a nest's: the inner loop's number, {@link SkeletonParts}). Read back,
     * {@code instruction} is the label's address; written, it is not used.
     */
    public record Item(long instruction, int kind, int size, int access, int flags, int weightMa, int weightAia, int blockRefs,
                       int blockMa, int blockAia, int baseSlot, int indexSlot, int scale, int phase, int cond, boolean call,
                       long displacement) {}

    public static String directives(Item i, String instructionLabel) {
        return "\t.long " + instructionLabel + "-.\n\t.byte " + i.kind() + ", " + i.size() + ", " + i.access() + ", " + i.flags()
                + "\n\t.short " + i.weightMa() + ", " + i.weightAia() + ", " + i.blockRefs() + ", " + i.blockMa() + ", " + i.blockAia()
                + "\n\t.byte " + i.baseSlot() + ", " + i.indexSlot() + ", " + i.scale() + ", " + i.phase() + ", " + i.cond() + ", "
                + (i.call() ? 1 : 0) + "\n\t.quad " + i.displacement() + "\n";
    }

    public static Item decodeItem(ByteBuffer b, int at, long address) {
        return new Item(address + at + b.getInt(at), u8(b, at + 4), u8(b, at + 5), u8(b, at + 6), u8(b, at + 7), u16(b, at + 8),
                u16(b, at + 10), u16(b, at + 12), u16(b, at + 14), u16(b, at + 16), u8(b, at + 18), u8(b, at + 19), u8(b, at + 20),
                u8(b, at + 21), u8(b, at + 22), (b.get(at + 23) & 1) != 0, b.getLong(at + 24));
    }

    /**
     * A conditional block's or side exit's marker ({@link SkeletonFormat#MARKER_SIZE} bytes): i32 its probe's label
     * − here (0 for a computed one, which has no probe), u16 the body position, u8 phase, u8 kind
     * ({@link SkeletonFormat#markerKind}). Read back, {@code probe} is the label's address.
     */
    public record Marker(long probe, int item, boolean phase, int kind) {}

    /** {@code probeLabel} null: a computed marker, whose offset is 0. */
    public static String directives(Marker m, String probeLabel) {
        return "\t.long " + (probeLabel == null ? "0" : probeLabel + "-.") + "\n\t.short " + m.item() + "\n\t.byte "
                + (m.phase() ? 1 : 0) + ", " + m.kind() + "\n";
    }

    public static Marker decodeMarker(ByteBuffer b, int at, long address) {
        return new Marker(address + at + b.getInt(at), u16(b, at + 4), b.get(at + 6) != 0, u8(b, at + 7));
    }

    /**
     * The tail of a loop tested at the top below code, or entered in the middle ({@link SkeletonFormat#TAIL_SIZE}
     * bytes): u16 the body positions before the test, u8 whether the trip register's update comes before it, u8 0,
     * u16 the position the first iteration starts at, u16 the slots updated before it (type 5 only; 0 in type 4).
     */
    public record Tail(int exitItem, boolean tripBeforeExit, int entryItem, int entryMask) {}

    public static String directives(Tail t) {
        return "\t.short " + t.exitItem() + "\n\t.byte " + (t.tripBeforeExit() ? 1 : 0) + ", 0\n\t.short " + t.entryItem() + ", "
                + t.entryMask() + "\n";
    }

    public static Tail decodeTail(ByteBuffer b, int at) {
        return new Tail(u16(b, at), b.get(at + 2) != 0, u16(b, at + 4), u16(b, at + 6));
    }

    /**
     * A value an outer loop computes for a nested one, {@code constant + Σ factors[j] × slot slots[j]}: i64
     * constant, u8 the count of terms and 7 bytes 0, then per term i64 factor, u8 slot and 7 bytes 0.
     */
    public record Value(long constant, int[] slots, long[] factors) {
        public int size() { return 16 + 16 * slots.length; }
    }

    public static String directives(Value v) {
        var t = new StringBuilder("\t.quad " + v.constant() + "\n\t.byte " + v.slots().length + ", 0, 0, 0, 0, 0, 0, 0\n");
        for (int j = 0; j < v.slots().length; j++)
            t.append("\t.quad ").append(v.factors()[j]).append("\n\t.byte ").append(v.slots()[j]).append(", 0, 0, 0, 0, 0, 0, 0\n");
        return t.toString();
    }

    public static Value decodeValue(ByteBuffer b, int at) {
        int terms = u8(b, at + 8);
        int[] slots = new int[terms];
        long[] factors = new long[terms];
        for (int j = 0, p = at + 16; j < terms; j++, p += 16) {
            factors[j] = b.getLong(p);
            slots[j] = u8(b, p + 8);
        }
        return new Value(b.getLong(at), slots, factors);
    }

    /** A declined loop's record ({@link SkeletonFormat#DECLINED_SIZE} bytes): u8 type 2, u8 reason, u16 0, i32 back edge label − here. */
    public static String declined(int reason, String backEdgeLabel) {
        return "\t.byte " + SkeletonFormat.RECORD_DECLINED + ", " + reason + ", 0, 0\n\t.long " + backEdgeLabel + "-.\n";
    }

    /** The version record that opens an object file's part ({@link SkeletonFormat#VERSION_SIZE} bytes): u8 type, u8 version, 6 bytes 0. */
    public static String version() {
        return "\t.byte " + SkeletonFormat.RECORD_VERSION + ", " + SkeletonFormat.VERSION + ", 0, 0\n\t.long 0\n";
    }

    private static int u8(ByteBuffer b, int at) { return Byte.toUnsignedInt(b.get(at)); }

    private static int u16(ByteBuffer b, int at) { return Short.toUnsignedInt(b.getShort(at)); }
}
