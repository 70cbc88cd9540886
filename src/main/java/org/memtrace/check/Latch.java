package org.memtrace.check;

/**
 * The end of a loop body as a symbolic walk meets it: the last compare before the back edge and the back edge's
 * jump. {@link LoopRanges} (an innermost loop) and {@link NestHoist} (the loop around one) walk their bodies
 * instruction by instruction and hand each one here, so that both read a loop's exit the same way.
 */
final class Latch {
    private Linear a, b;
    private boolean narrowCompare;
    private String jump;

    /**
     * Takes {@code in}: a jump must go back to {@code label} (false otherwise: the loop has another exit), a
     * {@code cmp} of two wide or two 32-bit operands is remembered, anything else is executed on {@code s} and
     * forgets the compare (it may have set the flags the jump reads).
     */
    boolean take(Symbolic s, AsmLine.Instruction in, String label) {
        String m = in.mnemonic();
        if (in.isJump()) {
            if (in.operands().size() != 1 || !in.operands().getFirst().equals(label)) return false;
            jump = m;
        } else if ((m.equals("cmpq") || m.equals("cmp")) && in.operands().size() == 2 && Registers.wide(in.operands().get(1))) {
            a = LoopHoist.operand(s, in.operands().get(0));
            b = LoopHoist.operand(s, in.operands().get(1));
            narrowCompare = false;
        } else if (m.equals("cmpl") && in.operands().size() == 2) {
            a = LoopHoist.narrowOperand(s, in.operands().get(0));
            b = LoopHoist.narrowOperand(s, in.operands().get(1));
            narrowCompare = true;
        } else {
            forget();
            s.step(in);
        }
        return true;
    }

    /** Something between the compare and the jump that may change the flags. */
    void forget() { a = b = null; }

    /** Whether the back edge was reached. */
    boolean reached() { return jump != null; }

    /** How the loop ends, its state at the back edge being {@code s}, or null when that is not known. */
    LoopRanges.Exit exit(Symbolic s) { return LoopRanges.exit(s, a, b, jump, narrowCompare); }
}
