package org.memtrace.rewrite;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.DwarfLocals;
import org.memtrace.x86.MemoryAccess;
import org.memtrace.x86.MemoryOperand;

/**
 * The stack variables a check plan of {@code memtrace run --check --mode rewrite} checks direct accesses against
 * (docs/check.md, "Direct accesses to stack variables"): in a function of the module's DWARF that keeps a frame
 * pointer and whose unit gcc compiled without optimisation ({@link DwarfLocals}), an access
 * {@code disp(%rbp,%index,scale)} names its object by its displacement, as Spindle's object-level checks name an
 * access's object by where its address came from: gcc at -O0 puts an array's (or a struct's member's) offset in
 * the displacement and the whole index in the register, so the variable that holds {@code %rbp + disp} is the
 * one indexed. The access must then stay inside that variable ({@link CheckProbe} tests it inline, flag-free).
 *
 * <p>Why only unoptimised units: an optimising compiler folds constants of the index into the displacement
 * ({@code a[i - 1]} as {@code a - 4}), which would name the variable below. Where two variables hold the
 * displacement (scopes sharing a slot) the check is against their hull. Accesses through another register
 * (a pointer to a local, gcc's {@code lea} then {@code add} of a char array's index) and {@code %rbp}-based
 * accesses with no index are not checked here, nor against the shadow ({@link #frameSlot}), but for those
 * statically outside every variable, which are reported whenever they run ({@link FrameConstants}).
 */
final class StackSlots {
    /** The variable an access is checked against: {@code [cfaOffset, cfaOffset + size)} from the frame's CFA. */
    record Slot(String variable, String function, int line, long cfaOffset, long size) {}

    static final StackSlots NONE = new StackSlots(List.of());

    private final List<DwarfLocals.Function> functions; // sorted by low, unoptimised ones only
    private final Map<Long, FrameConstants.Finding> constants; // by instruction: frame slots statically out of bounds
    private final Map<Long, LeaOrigins.Finding> origins; // by instruction: pointers from a lea of an object
    private final RspFrames.Found rsp; // optimised code's %rsp-based accesses

    StackSlots(List<DwarfLocals.Function> functions) { this(functions, Map.of(), Map.of(), RspFrames.Found.NONE); }

    private StackSlots(List<DwarfLocals.Function> functions, Map<Long, FrameConstants.Finding> constants,
                       Map<Long, LeaOrigins.Finding> origins, RspFrames.Found rsp) {
        this.functions = functions.stream().filter(DwarfLocals.Function::unoptimised).toList();
        this.constants = constants;
        this.origins = origins;
        this.rsp = rsp;
    }

    /**
     * The stack variables of {@code elf}'s DWARF, with its constant frame accesses classified ({@link FrameConstants};
     * optimised code's from {@code %rsp}: {@link RspFrames}) and the accesses through a pointer from a {@code lea}
     * of a global or a variable found ({@link LeaOrigins}).
     */
    static StackSlots of(ElfFile elf) { return of(elf, DwarfLocals.readAll(elf)); }

    /** The same from {@code elf}'s DWARF read once ({@link DwarfLocals#readAll}), which run --check's table reads too. */
    static StackSlots of(ElfFile elf, DwarfLocals.Frames dwarf) {
        List<DwarfLocals.Function> functions = dwarf.framed();
        return new StackSlots(functions, FrameConstants.of(elf, functions), LeaOrigins.of(elf, functions),
                RspFrames.of(elf, dwarf.optimised()));
    }

    /** The optimised functions whose calls all see the CFA at one {@code %rsp + k}, with k ({@link RspFrames.Found#calls}). */
    Map<Long, Long> cfaAtCalls() { return rsp.calls(); }

    /** The object the pointer of {@code a}, made by the instruction at {@code address}, came from ({@link LeaOrigins}). */
    Optional<LeaOrigins.Origin> originOf(long address, MemoryAccess a) {
        LeaOrigins.Finding f = origins.get(address);
        return f != null && !a.implicitStack() && f.operand().equals(a.operand()) ? Optional.of(f.origin()) : Optional.empty();
    }

    /** Whether {@code a} at {@code address} is an optimised function's {@code %rsp}-based access that {@link RspFrames} checks. */
    boolean rspChecked(long address, MemoryAccess a) {
        if (!a.operand().base().isStackPointer() || a.implicitStack()) return false;
        return rsp.constants().containsKey(address) || rsp.indexed().containsKey(address);
    }

    /** k where the CFA is {@code base + k} for {@code a}'s base register at {@code address}: 16 for {@code %rbp}. */
    long baseToCfa(long address, MemoryAccess a) {
        if (!a.operand().base().isStackPointer()) return 16;
        RspFrames.Indexed i = rsp.indexed().get(address);
        if (i == null) throw new IllegalStateException("no CFA known at " + Long.toHexString(address));
        return i.rspToCfa();
    }

    /** How many constant frame accesses are reported unconditionally (statically out of bounds). */
    int constantFindings() { return constants.size() + rsp.constants().size(); }

    boolean isEmpty() { return functions.isEmpty(); }

    /**
     * Whether {@code a}, made by the instruction at {@code address}, is a frame slot {@code disp(%rbp)} (no index)
     * of an unoptimised frame-pointer function: an address in its own stack frame, whose shadow nobody poisons in
     * a binary nobody rebuilt, so the shadow test can never fail and the access is not checked (issue 22, slow22:
     * gcc -O0 loops are made of such accesses, each a trampoline round trip for nothing). An indexed one is
     * {@link #slotOf}'s.
     */
    boolean frameSlot(long address, MemoryAccess a) {
        MemoryOperand m = a.operand();
        if (functions.isEmpty() || a.implicitStack() || a.sizeBytes() <= 0) return false;
        if (!m.base().isFramePointer() || m.base().widthBits() != 64 || !m.index().isNone() || m.segment().isSegmentWithBase())
            return false;
        return functionAt(address) != null && !constants.containsKey(address);
    }

    /**
     * The variable a frame slot {@code disp(%rbp)} made by the instruction at {@code address} is statically
     * outside of ({@link FrameConstants}): its trampoline reports it whenever it runs.
     */
    Optional<FrameConstants.Finding> constantOf(long address, MemoryAccess a) {
        MemoryOperand m = a.operand();
        if (a.implicitStack() || !m.index().isNone()) return Optional.empty();
        if (m.base().isStackPointer()) return Optional.ofNullable(rsp.constants().get(address));
        if (constants.isEmpty() || !m.base().isFramePointer()) return Optional.empty();
        return Optional.ofNullable(constants.get(address));
    }

    /** The variable that {@code a}, made by the instruction at {@code address}, is checked against, if any. */
    Optional<Slot> slotOf(long address, MemoryAccess a) {
        MemoryOperand m = a.operand();
        if (m.base().isStackPointer() && !a.implicitStack() && !m.index().isNone())
            return Optional.ofNullable(rsp.indexed().get(address)).map(RspFrames.Indexed::slot);
        if (functions.isEmpty() || a.implicitStack() || a.sizeBytes() <= 0) return Optional.empty();
        if (!m.base().isFramePointer() || m.base().widthBits() != 64 || m.index().isNone() || m.index().widthBits() != 64
                || m.segment().isSegmentWithBase()) return Optional.empty();
        DwarfLocals.Function f = functionAt(address);
        if (f == null) return Optional.empty();
        long origin = m.displacement() - 16; // from the CFA: %rbp + 16 in the body of a frame-pointer function
        List<DwarfLocals.Local> holding = new ArrayList<>();
        for (DwarfLocals.Local l : f.locals())
            if (origin >= l.cfaOffset() && origin - l.cfaOffset() < l.size()) holding.add(l);
        if (holding.isEmpty()) return Optional.empty();
        long beg = holding.stream().mapToLong(DwarfLocals.Local::cfaOffset).min().orElseThrow();
        long end = holding.stream().mapToLong(l -> l.cfaOffset() + l.size()).max().orElseThrow();
        if (a.sizeBytes() > end - beg || end - beg >= (1L << 31)) return Optional.empty();
        DwarfLocals.Local first = holding.stream().filter(l -> l.cfaOffset() == beg).findFirst().orElseThrow();
        return Optional.of(new Slot(first.name(), f.name(), first.line(), beg, end - beg));
    }

    private DwarfLocals.Function functionAt(long address) {
        int lo = 0, hi = functions.size();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (functions.get(mid).low() <= address) lo = mid + 1; else hi = mid;
        }
        if (lo == 0) return null;
        DwarfLocals.Function f = functions.get(lo - 1);
        return address < f.high() ? f : null;
    }
}
