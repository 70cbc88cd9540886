package org.memtrace.select;

import org.memtrace.x86.Instruction;
import org.memtrace.x86.MemoryOperand;
import org.memtrace.x86.Register;

import java.util.Map;
import java.util.Optional;

/**
 * Maps an x86 memory operand onto the BID model (§III-A). A static address is a place ({@link StaticPlaces}:
 * symbol + offset) when the file says which object it is in, else the plain address. RIP-relative and
 * absolute operands become IRR with the static address as base. A displacement that is a static object's
 * address even with a register added ({@code [rdx+table]}: in a fixed-address executable one inside the
 * loaded image, in an object one with an absolute relocation) is IRR too, with the index register as i and
 * the base register as d. Everything else is RRI: base register, index register times scale, displacement
 * (nil displacement is 0, as both denote the same address). A base register that the block loaded with a
 * static address ({@code lea rdx, [rip+table]} then {@code [rdx+rcx*4]}, the position-independent idiom)
 * makes the expression IRR on that address.
 */
final class ExpressionBuilder {
    /** The place of each instruction's static operand, by instruction address. */
    private final Map<Long, BidParameter.Place> places;

    ExpressionBuilder(Map<Long, BidParameter.Place> places) {
        this.places = places;
    }

    /**
     * Whether {@code m} of {@code insn} reads a GOT slot: the linker's indirection to a symbol's address, which
     * it may relax away (into a {@code lea} or an immediate) when the symbol is in the file. Not a memory
     * reference of the model, so the selection does not depend on the link.
     */
    boolean readsGot(Instruction insn, MemoryOperand m) {
        BidParameter.Place place = places.get(insn.address());
        return place != null && place.got() && (m.isRipRelative() || m.base().isNone());
    }

    /** The static address {@code m} of {@code insn} names, if any: its place, else for a RIP-relative or absolute operand the address. */
    BidParameter staticAddress(Instruction insn, MemoryOperand m) {
        BidParameter.Place place = places.get(insn.address());
        if (place != null) {
            return place;
        }
        return new BidParameter.Immediate(m.staticAddress().orElse(m.displacement()));
    }

    BidExpression build(Instruction insn, MemoryOperand m, Incarnations incarnations) {
        Register segment = m.segment().isSegmentWithBase() ? m.segment() : Register.NONE;
        BidParameter index = m.index().isNone() ? BidParameter.NIL
                : incarnations.of(m.index(), Math.max(1, m.scale()));
        if (m.isRipRelative() || (m.base().isNone() && segment.isNone())) {
            return new BidExpression(Template.IRR, staticAddress(insn, m), index, BidParameter.NIL, segment);
        }
        Optional<BidParameter> loaded = m.base().isNone() ? Optional.empty() : incarnations.staticAddress(m.base());
        if (loaded.isPresent() && segment.isNone()) {
            BidParameter b = switch (loaded.get()) {
                case BidParameter.Place p -> p.plus(m.displacement());
                case BidParameter.Immediate(long a) -> new BidParameter.Immediate(a + m.displacement());
                default -> throw new IllegalStateException("a register holds " + loaded.get());
            };
            return new BidExpression(Template.IRR, b, index, BidParameter.NIL, segment);
        }
        BidParameter base = incarnations.of(m.base().isNone() ? segment : m.base(), 1);
        BidParameter.Place place = places.get(insn.address());
        if (place != null && segment.isNone()) {
            return new BidExpression(Template.IRR, place, index, base, segment);
        }
        return new BidExpression(Template.RRI, base, index, new BidParameter.Immediate(m.displacement()), segment);
    }
}
