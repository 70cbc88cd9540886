package org.memtrace.x86;

import java.util.HashSet;
import java.util.Set;

/**
 * What one instruction does to the general registers, for a forward search of registers a probe may use
 * without saving them (the executable's group probes in {@code instrument}, rewrite mode's trampolines):
 * the 64-bit registers it reads, in an address or as an operand, and those it overwrites whole, so that
 * nothing of their old value survives. A write of 8 or 16 bits, a conditional write (cmov) and a write by an
 * instruction not known to overwrite count as reads: the searches must err towards "live".
 */
public record RegisterEffect(Set<Register> read, Set<Register> overwritten) {
    private static final Set<Register> GENERAL = Set.of(Register.named("rax"), Register.named("rcx"), Register.named("rdx"),
            Register.named("rbx"), Register.named("rsp"), Register.named("rbp"), Register.named("rsi"), Register.named("rdi"),
            Register.named("r8"), Register.named("r9"), Register.named("r10"), Register.named("r11"), Register.named("r12"),
            Register.named("r13"), Register.named("r14"), Register.named("r15"));

    /** Instructions after which a written 32- or 64-bit general register holds nothing of its old value. */
    private static final Set<String> OVERWRITING = Set.of("mov", "movzx", "movsx", "movsxd", "lea", "pop", "imul", "movd", "movq");

    /** The registers as enclosing 64-bit ones; one read in the same instruction as its overwrite is in both sets. */
    public static RegisterEffect of(Instruction insn) {
        Set<Register> read = new HashSet<>(4), overwritten = new HashSet<>(2);
        for (Operand o : insn.operands()) {
            if (o instanceof MemoryOperand m) {
                add(m.base(), read);
                add(m.index(), read);
            } else if (o instanceof RegisterOperand r && !r.register().isNone()) {
                int width = r.register().widthBits();
                if (r.write() && !r.read() && (width == 64 || width == 32) && OVERWRITING.contains(insn.mnemonic())
                        && GENERAL.contains(r.register().enclosing()))
                    overwritten.add(r.register().enclosing());
                else if (r.read() || r.write()) add(r.register(), read);
            }
        }
        return new RegisterEffect(read, overwritten);
    }

    private static void add(Register r, Set<Register> to) {
        if (!r.isNone()) to.add(r.enclosing());
    }
}
