package org.memtrace.format;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code memtrace_skel} section (docs/compiled-in.md, "Skeleton loops"): its named versions, record types,
 * entry sizes and kinds, the reasons a loop is declined, the computed condition both sides share, and the
 * functions the writer ({@code instrument.SkeletonWriter}) and the reader ({@code mtr.SkeletonTable}) both
 * call where they must agree: which record type a loop gets and what the type says back, how a marker entry's
 * kind byte reads, how a condition's entries are written and read. How a nest names its inner loop is
 * {@link SkeletonParts}.
 */
public final class SkeletonFormat {
    private SkeletonFormat() {}

    public static final String SECTION = "memtrace_skel";

    /** Version 1: files of earlier builds, no version record. */
    public static final int VERSION_1 = 1;
    /** Version 2: a marker entry may be a computed condition (its kind byte {@link #MARKER_COMPUTED}, a condition entry at the loop record's end). */
    public static final int VERSION_2 = 2;
    /** The version this memtrace writes, and the newest it reads. */
    public static final int VERSION = VERSION_2;

    /** Record types (a record's first byte). */
    public static final int RECORD_LOOP = 1, RECORD_DECLINED = 2;
    /** A loop record whose loop may end a run before the first iteration's body (entered at its test). */
    public static final int RECORD_LOOP_MAY_BE_EMPTY = 3;
    /** A loop tested at the top with code before its test: type 3's record and 8 bytes more at its end. */
    public static final int RECORD_LOOP_TESTED_BELOW_TOP = 4;
    /** A loop entered in the middle of its body: type 4's record, whose last 4 bytes say where its first iteration starts. */
    public static final int RECORD_LOOP_ENTERED_MID = 5;
    /** The version record, which opens each object file's part ({@link SkeletonParts}). */
    public static final int RECORD_VERSION = SkeletonParts.VERSION_RECORD;
    /**
     * Added to a loop record's type when an outer loop runs the loop (a nest): the record ends with the values the
     * outer loop computes for it, and the loop has no probes, only its labels.
     */
    public static final int RECORD_NESTED = 0x80;

    /** Sizes: a loop record's fixed head, one slot, one item, one marker, one condition term, the tail of types 4 and 5, a declined record, the version record. */
    public static final int LOOP_HEAD_SIZE = 16, SLOT_SIZE = 16, ITEM_SIZE = 32, MARKER_SIZE = 8, CONDITION_SIZE = 24, TAIL_SIZE = 8,
            DECLINED_SIZE = 8, VERSION_SIZE = 8;
    /** Bytes of a slot's register name, zero padded. */
    public static final int NAME_SIZE = 7;

    /** An item's kind: 0 a logged site, 1–3 a computed access (the site's kind), 4 an inner loop's whole run. */
    public static final int ITEM_LOGGED = 0, ITEM_NESTED = 4;
    /** A slot field naming no register (an item's index, a step's slot, a condition's immediate operand). */
    public static final int NONE = 0xff;
    /** An item's {@code cond}: a logged position of a block that may not run, placed in its iteration by the records around it. */
    public static final int OPTIONAL = 0xff;
    /** A marker entry's kind byte (its last): a conditional block's marker, a side exit's, a condition the replay computes. */
    public static final int MARKER_BLOCK = 0, MARKER_SIDE_EXIT = 1, MARKER_COMPUTED = 2;
    /** Terms a computed condition may and: the rewriter writes up to 4, the reader takes up to 16. */
    public static final int MAX_TERMS_WRITTEN = 4, MAX_TERMS_READ = 16;

    /** The type of a loop's record, from what the record must carry. */
    public static int loopType(boolean enteredMid, boolean testedBelowTop, boolean mayBeEmpty) {
        return enteredMid ? RECORD_LOOP_ENTERED_MID : testedBelowTop ? RECORD_LOOP_TESTED_BELOW_TOP
                : mayBeEmpty ? RECORD_LOOP_MAY_BE_EMPTY : RECORD_LOOP;
    }

    /**
     * Whether the reader takes a record of this type (its nested bit cleared, a declined record's type taken
     * first) as a loop's.
     */
    public static boolean isLoop(int type) { return type >= RECORD_LOOP && type <= RECORD_LOOP_ENTERED_MID; }

    /** Whether a run of a loop of this record type may end before its first iteration's body. */
    public static boolean mayBeEmpty(int type) { return type == RECORD_LOOP_MAY_BE_EMPTY || type == RECORD_LOOP_TESTED_BELOW_TOP; }

    /** Whether a loop record of this type ends with the 8-byte tail: the test's item, the trip's phase, the entry's item and mask. */
    public static boolean hasTail(int type) { return type == RECORD_LOOP_TESTED_BELOW_TOP || type == RECORD_LOOP_ENTERED_MID; }

    /** A marker entry's kind byte. */
    public static int markerKind(boolean computed, boolean sideExit) {
        return computed ? MARKER_COMPUTED : sideExit ? MARKER_SIDE_EXIT : MARKER_BLOCK;
    }

    /** Why a loop was not skeletonized, by the code the rewriter writes (1: files of the single-block rewriter; 13: of an older one). */
    public static final List<String> REASONS = List.of("", "more than one block", "call in loop without a record of its own (--no-stack)",
            "header reached by another jump", "indirect jump in the function", "rep string instruction in loop",
            "no induction register (trip count unknown)", "address depends on a load",
            "no address affine in the loop's registers", "back edge to a label the rewriter cannot place",
            "inner loop in the body", "exit from the middle of the body (break, return, goto)",
            "jump into the body from outside", "more than one back edge (continue)",
            "more conditional blocks or accesses than a loop record holds",
            "exit depends on loaded data and too few accesses computed per iteration to pay for the loop's records",
            "as many accesses logged as computed in every iteration",
            "entered by a jump to a test that reads memory or writes a register (at -O0: the counter lives in memory)",
            "fewer accesses computed per entry than values logged (a constant trip count)",
            "access the link may take away in loop (GOT load, -fno-plt call, TLS resolver call)",
            "inner loop whose registers at entry are not affine in the outer loop's",
            "inner loop whose trip count the outer loop's registers do not give");

    /** The reason's text for code {@code code}, or "reason N" for a code this memtrace does not know. */
    public static String reason(int code) { return code >= 0 && code < REASONS.size() ? REASONS.get(code) : "reason " + code; }

    /**
     * A conditional block's condition, computed per iteration instead of logged: the x86 flags of {@code a − b}
     * ({@code op} 1, {@code cmp}) or {@code a & b} ({@code op} 2, {@code test}) at {@code width} bytes, each
     * operand a slot's register (its low {@code width} bytes, its value at the compare: {@code phase} bit 0 for a,
     * bit 1 for b, when its update comes before the compare in the body) or the immediate when its slot is
     * {@link #NONE}; the block runs when the jump of condition code {@code cc} (the low nibble of its opcode: 2 b,
     * 3 ae, 4 e, 5 ne, 6 be, 7 a, 8 s, 9 ns, 12 l, 13 ge, 14 le, 15 g) is taken, if {@code whenTaken}, else when it
     * is not, and {@code and} (the condition of the jump's own block, when that one does not run every iteration;
     * null when it does) holds too.
     */
    public record Condition(int op, int width, int cc, boolean whenTaken, int slotA, int slotB, long immA, long immB, int phase,
                            Condition and) {
        public static final int CMP = 1, TEST = 2;

        /** One jump's term, with no other and-ed to it. */
        public Condition(int op, int width, int cc, boolean whenTaken, int slotA, int slotB, long immA, long immB, int phase) {
            this(op, width, cc, whenTaken, slotA, slotB, immA, immB, phase, null);
        }

        /** Whether the block runs, given the operands' values at the compare (an immediate operand's value is ignored). */
        public boolean holds(long a, long b) {
            if (slotA == NONE) a = immA;
            if (slotB == NONE) b = immB;
            int shift = 64 - 8 * width;
            long r = op == CMP ? a - b : a & b;
            // the operands and the result as the CPU sees them at this width: the top bit is the sign
            long ra = r << shift, aa = a << shift, ba = b << shift;
            boolean zf = ra == 0, sf = ra < 0;
            boolean cf = op == CMP && Long.compareUnsigned(aa, ba) < 0;
            boolean of = op == CMP && ((aa ^ ba) & (aa ^ ra)) < 0;
            boolean taken = switch (cc) {
                case 2 -> cf;
                case 3 -> !cf;
                case 4 -> zf;
                case 5 -> !zf;
                case 6 -> cf || zf;
                case 7 -> !cf && !zf;
                case 8 -> sf;
                case 9 -> !sf;
                case 12 -> sf != of;
                case 13 -> sf == of;
                case 14 -> zf || sf != of;
                case 15 -> !zf && sf == of;
                default -> throw new IllegalStateException("condition code " + cc); // refused when the section is read
            };
            return taken == whenTaken;
        }

        /** Whether the replay evaluates condition code {@code cc} (not parity, 10 and 11, nor overflow, 0 and 1). */
        public static boolean known(int cc) { return cc >= 2 && cc <= 15 && cc != 10 && cc != 11; }
    }

    /**
     * A computed condition's entries, 24 bytes a term: u8 op, width, cc, whenTaken, slotA, slotB, phase, and 1 when
     * another term follows (and-ed with this one), then i64 immA, immB.
     */
    public static String directives(Condition c) {
        String t = "\t.byte " + c.op() + ", " + c.width() + ", " + c.cc() + ", " + (c.whenTaken() ? 1 : 0) + ", " + c.slotA() + ", "
                + c.slotB() + ", " + c.phase() + ", " + (c.and() != null ? 1 : 0) + "\n\t.quad " + c.immA() + ", " + c.immB() + "\n";
        return c.and() == null ? t : t + directives(c.and());
    }

    /** A condition read back: the chain, and the offset past its last entry. */
    public record Read(Condition condition, int end) {}

    /**
     * The condition whose entries start at {@code at}, checked against a loop of {@code slots} slots; null when an
     * entry makes no sense (an unknown operation or condition code, a width that is no power of two up to 8, a slot
     * the loop does not log, more than {@link #MAX_TERMS_READ} terms).
     */
    public static Read decodeCondition(ByteBuffer b, int at, int slots) {
        List<Condition> terms = new ArrayList<>();
        boolean more = true;
        for (; more; at += CONDITION_SIZE) {
            Condition c = new Condition(u8(b, at), u8(b, at + 1), u8(b, at + 2), b.get(at + 3) != 0, u8(b, at + 4), u8(b, at + 5),
                    b.getLong(at + 8), b.getLong(at + 16), u8(b, at + 6));
            more = b.get(at + 7) != 0;
            if (c.op() < Condition.CMP || c.op() > Condition.TEST || Integer.bitCount(c.width()) != 1 || c.width() > 8
                    || !Condition.known(c.cc()) || c.slotA() != NONE && c.slotA() >= slots || c.slotB() != NONE && c.slotB() >= slots
                    || terms.size() == MAX_TERMS_READ)
                return null;
            terms.add(c);
        }
        Condition chain = null;
        for (Condition c : terms.reversed())
            chain = new Condition(c.op(), c.width(), c.cc(), c.whenTaken(), c.slotA(), c.slotB(), c.immA(), c.immB(), c.phase(), chain);
        return new Read(chain, at);
    }

    private static int u8(ByteBuffer b, int at) { return Byte.toUnsignedInt(b.get(at)); }
}
