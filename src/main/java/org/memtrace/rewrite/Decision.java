package org.memtrace.rewrite;

import java.util.List;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.MemoryAccess;

/** What the planner decided for one memory instruction of a module's code. */
public sealed interface Decision {
    Instruction instruction();

    /**
     * Rewritten: its first five bytes become a {@code jmp rel32} to a trampoline that records {@code accesses},
     * runs the instruction's own bytes ({@code bytes}, a RIP-relative displacement at {@code ripDisplacement}
     * re-aimed, -1 when there is none) and jumps back to the next instruction.
     */
    record Patch(Instruction instruction, byte[] bytes, List<MemoryAccess> accesses, int ripDisplacement) implements Decision {
        public Patch {
            bytes = bytes.clone();
            accesses = List.copyOf(accesses);
        }
    }

    /** Left untraced for {@code reason} (a later step gives these to the fault mode or the out-of-line executor). */
    record Left(Instruction instruction, Reason reason) implements Decision {}

    /** Why an instruction was left; the summary counts each. */
    enum Reason {
        /** Fewer than 5 bytes: no room for a {@code jmp rel32} (punning and eviction are not implemented yet). */
        SHORT("shorter than 5 bytes"),
        /** A call pushes its own address: moved into a trampoline it would return there. */
        CALL("calls"),
        /** An {@code %fs}/{@code %gs} operand: the probe would need the segment base. */
        SEGMENT("%fs/%gs operands"),
        /** A vector-indexed (VSIB) operand, a 32-bit address or an access the probe cannot describe. */
        ADDRESSING("VSIB, 32-bit or over-wide operands"),
        /** A rep string instruction: its count and direction are not recorded by this probe yet. */
        REP("rep string instructions");

        private final String words;

        Reason(String words) { this.words = words; }

        public String words() { return words; }
    }
}
