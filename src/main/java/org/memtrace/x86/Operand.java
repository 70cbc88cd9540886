package org.memtrace.x86;

/** One operand of a decoded instruction, including the implicit and hidden ones Zydis reports. */
public sealed interface Operand permits RegisterOperand, MemoryOperand, ImmediateOperand, PointerOperand {

    /** Whether the operand is written in the assembly text, implied by the mnemonic, or only a side effect. */
    enum Visibility { EXPLICIT, IMPLICIT, HIDDEN }

    Visibility visibility();
}
