package org.memtrace.rewrite;

import java.util.List;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.MemoryAccess;

/** What the planner decided for one memory instruction of a module's code. */
public sealed interface Decision {
    Instruction instruction();

    /**
     * Rewritten: the first five bytes of the first part become a {@code jmp rel32} to a trampoline that, part by
     * part, records the part's accesses and runs its bytes, then jumps back past the last part (a call: pushes
     * the original return address and jumps to the callee). More than one part when the instruction was
     * shorter than the jump and its successors were moved with it (docs/rewriting.md, "Short instructions").
     */
    record Patch(List<Part> parts) implements Decision {
        public Patch {
            parts = List.copyOf(parts);
        }

        public Instruction instruction() { return parts.getFirst().instruction(); }

        /** The bytes the jump replaces end here (an instruction boundary). */
        public long end() { return parts.getLast().instruction().nextAddress(); }

        /** Sites of the whole trampoline, one per access of each part. */
        public int sites() { return parts.stream().mapToInt(p -> p.accesses().size()).sum(); }
    }

    /**
     * One instruction moved into a trampoline: its encoding {@code bytes}, the accesses its probe records
     * (none for a moved neighbour without memory access), where its RIP-relative displacement sits (-1: none),
     * and how it moves.
     */
    record Part(Instruction instruction, byte[] bytes, List<MemoryAccess> accesses, int ripDisplacement, Move move) {
        public Part {
            bytes = bytes.clone();
            accesses = List.copyOf(accesses);
        }

        public boolean call() { return move == Move.CALL; }
    }

    /** How a part runs in the trampoline. */
    enum Move {
        /** Its bytes, unchanged but for a RIP-relative displacement (a {@code ret} too: it needs nothing else). */
        COPY,
        /** A {@code call rel32}: the original return address pushed, then a jump to the callee. */
        CALL,
        /** A direct jump or conditional jump, written anew by the assembler to reach the same target. */
        BRANCH
    }

    /** A memory instruction moved, and recorded, in the trampoline of the short instruction before it. */
    record Covered(Instruction instruction) implements Decision {}

    /** Left untraced for {@code reason} (a later step gives these to the fault mode or the out-of-line executor). */
    record Left(Instruction instruction, Reason reason) implements Decision {}

    /** Why an instruction was left; the summary counts each. */
    enum Reason {
        /** Fewer than 5 bytes in a module where runs are not moved (no symbol table, or C++ landing pads). */
        SHORT("short, in code without symbols or with landing pads"),
        /** An indirect call, or a call of another encoding than {@code e8 rel32} (that one is emulated). */
        CALL("indirect calls"),
        /** Shorter than 5 bytes and its successors could not be moved with it (a branch target among them, a branch, a function with indirect jumps). */
        NEIGHBOURS("short, neighbours not movable"),
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
