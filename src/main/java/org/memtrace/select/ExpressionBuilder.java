package org.memtrace.select;

import org.memtrace.x86.MemoryOperand;
import org.memtrace.x86.Register;

import java.util.OptionalLong;

/**
 * Maps an x86 memory operand onto the BID model (§III-A). RIP-relative and absolute operands become IRR
 * with the resolved static address as base. In a fixed-address executable a displacement that lies inside
 * the loaded image is a static object's address even when a register is added ({@code [rdx+table]}), so
 * that is IRR too, with the index register as i and the base register as d. Everything else is RRI: base
 * register, index register times scale, displacement (nil displacement is 0, as both denote the same
 * address). A base register that the block loaded with a static address ({@code lea rdx, [rip+table]} then
 * {@code [rdx+rcx*4]}, the position-independent idiom) makes the expression IRR on that address.
 */
final class ExpressionBuilder {
    private final boolean fixedAddress;
    private final long imageStart;
    private final long imageEnd;

    ExpressionBuilder(boolean fixedAddress, long imageStart, long imageEnd) {
        this.fixedAddress = fixedAddress;
        this.imageStart = imageStart;
        this.imageEnd = imageEnd;
    }

    static ExpressionBuilder forImage(ElfText elf) {
        return new ExpressionBuilder(elf.fixedAddress(), elf.imageStart(), elf.imageEnd());
    }

    BidExpression build(MemoryOperand m, Incarnations incarnations) {
        Register segment = m.segment().isSegmentWithBase() ? m.segment() : Register.NONE;
        BidParameter index = m.index().isNone() ? BidParameter.NIL
                : incarnations.of(m.index(), Math.max(1, m.scale()));
        if (m.isRipRelative() || (m.base().isNone() && segment.isNone())) {
            long address = m.staticAddress().orElse(m.displacement());
            return new BidExpression(Template.IRR, new BidParameter.Immediate(address), index, BidParameter.NIL, segment);
        }
        OptionalLong loaded = m.base().isNone() ? OptionalLong.empty() : incarnations.staticAddress(m.base());
        if (loaded.isPresent() && segment.isNone()) {
            return new BidExpression(Template.IRR, new BidParameter.Immediate(loaded.getAsLong() + m.displacement()),
                    index, BidParameter.NIL, segment);
        }
        BidParameter base = incarnations.of(m.base().isNone() ? segment : m.base(), 1);
        if (fixedAddress && segment.isNone() && m.displacement() >= imageStart && m.displacement() < imageEnd) {
            return new BidExpression(Template.IRR, new BidParameter.Immediate(m.displacement()), index, base, segment);
        }
        return new BidExpression(Template.RRI, base, index, new BidParameter.Immediate(m.displacement()), segment);
    }
}
