package org.memtrace.rewrite;

import java.util.List;
import org.memtrace.x86.MemoryAccess;
import org.memtrace.x86.MemoryOperand;

/**
 * The check a trampoline of {@code memtrace run --check --mode rewrite} makes before a moved instruction runs
 * (docs/check.md, "memtrace run --check"): each access that can touch the heap is tested against the shadow
 * memory of {@code memtrace cc --check} (byte {@code (addr >> 3) + 0x7fff8000}, agent/check/check.h), inline:
 *
 * <pre>
 *   lea -128(%rsp),%rsp; push %rax; push %rcx        # below the red zone
 *   lea EA,%rax                                      # the access's address
 *   mov $3,%ecx; shrx %rcx,%rax,%rcx; movzbl 0x7fff8000(%rcx),%ecx; jrcxz first_ok
 *   call *0x7fff9ff8; .long desc; .long mt_base+INSN - .; jmp done
 * first_ok:                                          # the last byte's granule, when the access has more than one byte
 *   lea n-1(%rax),%rax; mov $3,%ecx; shrx ...; movzbl ...; jrcxz done
 *   lea -(n-1)(%rax),%rax; call *0x7fff9ff8; .long desc; .long mt_base+INSN - .
 * done:
 *   pop %rcx; pop %rax; lea 128(%rsp),%rsp
 * </pre>
 *
 * No instruction of it changes the flags (shrx is BMI2's; jrcxz tests %rcx), so nothing of the program's state
 * needs saving but the two registers. A shadow byte that is not 0 calls the runtime's slow path through the
 * quad at 0x7fff9ff8, which the check runtime fills (agent/check/check_rwprobe.c): an absolute address, so the
 * plan and the runtime that applies it stay those of the tracing rewrite. Accesses of up to 32 bytes are whole
 * when both end granules are 0 (every redzone is 32 bytes or more). A rep string instruction's ranges
 * ({@code %rcx} elements from {@code %rsi}, {@code %rdi}; direction flag clear) go to the runtime every time.
 *
 * <p>Not checked, since no redzone is there in a binary nobody rebuilt: stack slots (implicit ones, and operands
 * based on {@code %rsp}), RIP-relative and absolute operands (globals), {@code %fs}/{@code %gs} operands (thread-local
 * storage). An indexed access from {@code %rbp} in gcc -O0 code with DWARF is checked against its stack variable
 * instead of the shadow ({@link StackSlots}; the sequence at {@code stack}); one without an index there is a slot
 * of the function's own frame, whose shadow is 0, and is not checked at all ({@link StackSlots#frameSlot}).
 */
final class CheckProbe {
    /** The quad the check runtime fills with its slow path's address: the shadow of the null page's last 64 bytes. */
    static final long SLOT = 0x7fff9ff8L;
    static final int WRITE = 0x10000, RANGE = 0x20000, STACK = 0x40000, GLOBAL = 0x80000;

    private CheckProbe() {}

    /** Whether the access can touch the heap, so is checked. */
    static boolean checked(MemoryAccess a) {
        MemoryOperand m = a.operand();
        if (a.implicitStack() || a.sizeBytes() <= 0) return false;
        if (m.isRipRelative() || m.base().isStackPointer() || m.segment().isSegmentWithBase()) return false;
        return !(m.base().isNone() && m.index().isNone());
    }

    /** The accesses of {@code part} its check tests. */
    static List<MemoryAccess> checks(Decision.Part part) { return checks(part, StackSlots.NONE); }

    /** The same, but for the frame slots of the functions {@code slots} knows ({@link StackSlots#frameSlot}). */
    static List<MemoryAccess> checks(Decision.Part part, StackSlots slots) {
        long at = part.instruction().address();
        return part.accesses().stream().filter(a -> checked(a) ? !slots.frameSlot(at, a) : slots.rspChecked(at, a)).toList();
    }

    /** Whether {@code p}'s trampoline checks anything (a patch that does not is not written in a check plan). */
    static boolean checksAny(Decision.Patch p) { return checksAny(p, StackSlots.NONE); }

    /** The same, the frame slots {@code slots} knows not checked. */
    static boolean checksAny(Decision.Patch p, StackSlots slots) {
        return p.parts().stream().anyMatch(part -> !checks(part, slots).isEmpty());
    }

    /** The most bytes the checks of {@code p} take. */
    static long bound(Decision.Patch p) { return bound(p, StackSlots.NONE); }

    /** The same, its stack variables' checks ({@link StackSlots}) with their names included. */
    static long bound(Decision.Patch p, StackSlots slots) {
        long n = 0;
        for (Decision.Part part : p.all())
            for (MemoryAccess a : checks(part, slots)) {
                long at = part.instruction().address();
                var slot = slots.constantOf(at, a).map(FrameConstants.Finding::slot).or(() -> slots.slotOf(at, a));
                var origin = slots.originOf(at, a);
                if (origin.isPresent()) n += 200 + 4L * names(origin.get()).length();
                else n += slot.isEmpty() ? 96 : 160 + 4L * (slot.get().variable().length() + slot.get().function().length());
            }
        return n;
    }

    /** The checks of one part, before its bytes; {@code label} is unique in the text. */
    static void emit(StringBuilder s, Decision.Part part, String label) { emit(s, part, label, StackSlots.NONE); }

    /** The same, an access {@code slots} names a stack variable for checked against that variable instead. */
    static void emit(StringBuilder s, Decision.Part part, String label, StackSlots slots) {
        List<MemoryAccess> checks = checks(part, slots);
        for (int i = 0; i < checks.size(); i++) {
            MemoryAccess a = checks.get(i);
            String l = label + "_" + i;
            int desc = (a.write() ? WRITE : 0);
            var constant = part.repString() ? java.util.Optional.<FrameConstants.Finding>empty() : slots.constantOf(part.instruction().address(), a);
            if (constant.isPresent()) {
                outside(s, part, a, constant.get(), desc, l);
                continue;
            }
            var slot = part.repString() ? java.util.Optional.<StackSlots.Slot>empty() : slots.slotOf(part.instruction().address(), a);
            if (slot.isPresent()) {
                stack(s, part, a, slot.get(), slots.baseToCfa(part.instruction().address(), a), desc, l);
                continue;
            }
            var origin = part.repString() ? java.util.Optional.<LeaOrigins.Origin>empty() : slots.originOf(part.instruction().address(), a);
            if (origin.isPresent()) {
                object(s, part, a, origin.get(), desc, l);
                continue;
            }
            s.append("\tlea -128(%rsp),%rsp\n\tpush %rax\n\tpush %rcx\n");
            s.append("\tlea ").append(TrampolineWriter.address(a.operand())).append(",%rax\n");
            if (part.repString()) {
                // %rcx elements of the access's size: the range's bytes, in %rcx for the runtime
                s.append("\tlea 0(,%rcx,").append(a.sizeBytes()).append("),%rcx\n");
                slowCall(s, desc | RANGE, part);
            } else {
                int n = a.sizeBytes();
                desc |= n;
                granule(s, l + "_first");
                slowCall(s, desc, part);
                s.append("\tjmp ").append(l).append("_done\n");
                s.append(l).append("_first:\n");
                if (n > 1) {
                    s.append("\tlea ").append(n - 1).append("(%rax),%rax\n");
                    granule(s, l + "_done");
                    s.append("\tlea ").append(-(n - 1)).append("(%rax),%rax\n");
                    slowCall(s, desc, part);
                }
                s.append(l).append("_done:\n");
            }
            s.append("\tpop %rcx\n\tpop %rax\n\tlea 128(%rsp),%rsp\n");
        }
    }

    /**
     * An indexed access {@code disp(%rbp,%idx,scale)} of {@code n} bytes checked against its variable
     * {@code [cfa + v, cfa + v + size)}, cfa = %rbp + 16 (optimised code: %rsp + k, {@link RspFrames}): its offset o = disp - 16 - v + idx * scale must be in
     * [0, size - n]. Without touching the flags: X = o >> 32 (0 when 0 <= o < 2^32), Y = ~(o - L) >> 63 with
     * L = size - n + 1 (0 when o < L, given o < 2^32), and the access is in bounds when X + Y is 0 (jrcxz).
     * Otherwise the runtime's slow path gets %rax = the address, %rcx = o, and five words: the descriptor
     * (size, write, {@link #STACK}), the instruction, the variable's size, its declaration line and its names
     * ("variable\0function\0", an offset from the word).
     */
    private static void stack(StringBuilder s, Decision.Part part, MemoryAccess a, StackSlots.Slot v, long cfa, int desc, String l) {
        MemoryOperand m = a.operand();
        int n = a.sizeBytes();
        long d = m.displacement() - cfa - v.cfaOffset();
        long limit = v.size() - n + 1;
        names(s, v, l);
        s.append("\tlea -128(%rsp),%rsp\n\tpush %rax\n\tpush %rcx\n\tpush %rdx\n");
        s.append("\tlea ").append(d).append("(,%").append(m.index().name()).append(',').append(Math.max(1, m.scale())).append("),%rax\n");
        s.append("\tlea ").append(-limit).append("(%rax),%rcx\n\tnot %rcx\n");
        s.append("\tmov $63,%edx\n\tshrx %rdx,%rcx,%rcx\n\tmov $32,%edx\n\tshrx %rdx,%rax,%rdx\n");
        s.append("\tlea (%rcx,%rdx),%rcx\n\tjrcxz ").append(l).append("_done\n");
        // the address for the report: the variable's start from the CFA (%rsp: below the 128 + 24 bytes pushed here)
        if (m.base().isStackPointer()) s.append("\tmov %rax,%rcx\n\tlea ").append(cfa + v.cfaOffset() + 152).append("(%rsp,%rcx),%rax\n");
        else s.append("\tmov %rax,%rcx\n\tlea ").append(16 + v.cfaOffset()).append("(%rbp,%rcx),%rax\n");
        slowCall(s, part, v, desc | n, l);
        s.append(l).append("_done:\n\tpop %rdx\n\tpop %rcx\n\tpop %rax\n\tlea 128(%rsp),%rsp\n");
    }

    /**
     * A frame slot {@code disp(%rbp)} statically outside its variable ({@link FrameConstants}): no test, the
     * runtime's slow path is called each time with %rax = the address, %rcx = its offset in the variable (a
     * constant) and the five words of {@link #stack}, so the report is the indexed access's.
     */
    private static void outside(StringBuilder s, Decision.Part part, MemoryAccess a, FrameConstants.Finding f, int desc, String l) {
        StackSlots.Slot v = f.slot();
        names(s, v, l);
        s.append("\tlea -128(%rsp),%rsp\n\tpush %rax\n\tpush %rcx\n");
        MemoryOperand m = a.operand();
        if (m.base().isStackPointer()) s.append("\tlea ").append(m.displacement() + 144).append("(%rsp),%rax\n"); // 128 + 16 pushed here
        else s.append("\tlea ").append(TrampolineWriter.address(m)).append(",%rax\n");
        s.append("\tmov $").append(f.offset()).append(",%rcx\n");
        slowCall(s, part, v, desc | a.sizeBytes(), l);
        s.append("\tpop %rcx\n\tpop %rax\n\tlea 128(%rsp),%rsp\n");
    }

    /**
     * An access through a pointer from a {@code lea} of an object ({@link LeaOrigins}) checked against that object,
     * {@code [start - slack, start + size)}: o = EA - start (EA + ~start + 1, flag-free), then {@link #stack}'s test
     * of o + slack against size + slack - n + 1. Out of it, the slow path as for a stack variable, %rcx = o, the
     * descriptor saying {@link #STACK} for a variable of the frame, {@link #GLOBAL} for a global (its name, and an
     * empty function name).
     */
    private static void object(StringBuilder s, Decision.Part part, MemoryAccess a, LeaOrigins.Origin origin, int desc, String l) {
        int n = a.sizeBytes();
        long slack = origin instanceof LeaOrigins.Global g ? g.slack() : 0;
        long limit = origin.size() + slack - n + 1;
        String start = switch (origin) {
            case LeaOrigins.Global g -> "mt_base+" + g.start() + "(%rip)";
            case LeaOrigins.Local v -> (16 + v.slot().cfaOffset()) + "(%rbp)";
        };
        StackSlots.Slot v = switch (origin) {
            case LeaOrigins.Global g -> new StackSlots.Slot(g.name(), "", 0, 0, g.size());
            case LeaOrigins.Local local -> local.slot();
        };
        names(s, v, l);
        s.append("\tlea -128(%rsp),%rsp\n\tpush %rax\n\tpush %rcx\n\tpush %rdx\n");
        s.append("\tlea ").append(TrampolineWriter.address(a.operand())).append(",%rax\n");
        s.append("\tlea ").append(start).append(",%rcx\n\tnot %rcx\n\tlea ").append(1 + slack).append("(%rax,%rcx),%rax\n");
        s.append("\tlea ").append(-limit).append("(%rax),%rcx\n\tnot %rcx\n");
        s.append("\tmov $63,%edx\n\tshrx %rdx,%rcx,%rcx\n\tmov $32,%edx\n\tshrx %rdx,%rax,%rdx\n");
        s.append("\tlea (%rcx,%rdx),%rcx\n\tjrcxz ").append(l).append("_done\n");
        s.append("\tlea ").append(-slack).append("(%rax),%rcx\n\tlea ").append(start).append(",%rax\n\tlea (%rax,%rcx),%rax\n");
        int kind = origin instanceof LeaOrigins.Global ? GLOBAL : 0;
        slowCall(s, part, v, desc | n | kind, l);
        s.append(l).append("_done:\n\tpop %rdx\n\tpop %rcx\n\tpop %rax\n\tlea 128(%rsp),%rsp\n");
    }

    private static String names(LeaOrigins.Origin o) {
        return switch (o) {
            case LeaOrigins.Global g -> g.name();
            case LeaOrigins.Local v -> v.slot().variable() + v.slot().function();
        };
    }

    /** A stack check's variable and function names, jumped over (after the slow call they could put jrcxz's target out of its reach). */
    private static void names(StringBuilder s, StackSlots.Slot v, String l) {
        s.append("\tjmp ").append(l).append("_start\n").append(l).append("_names:\n");
        s.append("\t.asciz \"").append(escape(v.variable())).append("\"\n\t.asciz \"").append(escape(v.function())).append("\"\n");
        s.append(l).append("_start:\n");
    }

    /** The runtime's slow path for a stack variable: the call and its five inline words (descriptor, site, size, line, names). */
    private static void slowCall(StringBuilder s, Decision.Part part, StackSlots.Slot v, int descriptor, String l) {
        int kind = (descriptor & GLOBAL) != 0 ? 0 : STACK;
        s.append("\tcall *").append(SLOT).append("\n\t.long ").append(descriptor | kind).append("\n\t.long mt_base+")
                .append(part.instruction().address()).append(" - .\n\t.long ").append(v.size()).append("\n\t.long ")
                .append(v.line()).append("\n\t.long ").append(l).append("_names - .\n");
    }

    /** A name as the assembler's string: printable ASCII as it is, every other byte (UTF-8) in octal. */
    private static String escape(String name) {
        var out = new StringBuilder();
        for (byte b : name.getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') out.append((char) c);
            else out.append(String.format("\\%03o", c));
        }
        return out.toString();
    }

    /** Jumps to {@code ok} when the shadow byte of the address in %rax is 0; clobbers %rcx only. */
    private static void granule(StringBuilder s, String ok) {
        s.append("\tmov $3,%ecx\n\tshrx %rcx,%rax,%rcx\n\tmovzbl 0x7fff8000(%rcx),%ecx\n\tjrcxz ").append(ok).append('\n');
    }

    private static void slowCall(StringBuilder s, int desc, Decision.Part part) {
        s.append("\tcall *").append(SLOT).append("\n\t.long ").append(desc).append("\n\t.long mt_base+")
                .append(part.instruction().address()).append(" - .\n");
    }
}
