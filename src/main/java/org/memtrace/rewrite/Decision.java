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
     * The {@code tail} ("Trampoline tails") is copies of the instructions after the last part, which keep their
     * own place, jump or int3: the trampoline runs them too and goes back after the last, so the short ones
     * among them, left to the int3 fallback, take no trap when reached by falling through. {@code via}, when
     * not null: the one part is a short instruction whose first 2 bytes become a {@code jmp rel8} to dead
     * padding nearby, where the {@code jmp rel32} goes instead (docs/rewriting.md, "Dead padding").
     */
    record Patch(List<Part> parts, List<Part> tail, Via via) implements Decision {
        public Patch {
            parts = List.copyOf(parts);
            tail = List.copyOf(tail);
        }

        public Patch(List<Part> parts) { this(parts, List.of(), null); }

        public Patch(List<Part> parts, List<Part> tail) { this(parts, tail, null); }

        public Instruction instruction() { return parts.getFirst().instruction(); }

        /** The bytes the jump replaces end here (an instruction boundary). */
        public long end() { return parts.getLast().instruction().nextAddress(); }

        /** Where the trampoline goes back to when its last part falls through: after the tail, else {@link #end}. */
        public long resume() { return tail.isEmpty() ? end() : tail.getLast().instruction().nextAddress(); }

        /** The parts in the trampoline's order: the moved ones, then the tail's copies. */
        public List<Part> all() {
            if (tail.isEmpty()) return parts;
            var all = new java.util.ArrayList<>(parts);
            all.addAll(tail);
            return all;
        }

        /** The same patch with {@code copies} as its tail ("Trampoline tails"). */
        public Patch withTail(List<Part> copies) { return new Patch(parts, copies, via); }

        /** Sites of the whole trampoline: one per access of each part, and a rep string instruction's count. */
        public int sites() { return all().stream().mapToInt(Part::sites).sum(); }
    }

    /** Dead padding at {@code address} whose first 5 bytes, {@code old}, a patch's {@code jmp rel32} takes. */
    record Via(long address, byte[] old) {
        public Via {
            old = old.clone();
        }
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

        public boolean call() { return move == Move.CALL || move == Move.INDIRECT_CALL; }

        /**
         * An unconditional {@code rep movs}, {@code rep stos} or {@code rep lods}: recorded as the compiled-in
         * probe records one (docs/compiled-in.md, "The probe"): its pointers and its count, one block.
         */
        public boolean repString() { return repString(instruction); }

        static boolean repString(Instruction insn) {
            String m = insn.mnemonic();
            return insn.rep() && (m.startsWith("movs") || m.startsWith("stos") || m.startsWith("lods"));
        }

        /** The probe's sites: one per access, and one more for a rep string instruction's count. */
        public int sites() { return accesses.size() + (repString() && !accesses.isEmpty() ? 1 : 0); }
    }

    /** How a part runs in the trampoline. */
    enum Move {
        /** Its bytes, unchanged but for a RIP-relative displacement (a {@code ret} too: it needs nothing else). */
        COPY,
        /** A {@code call rel32}: the original return address pushed, then a jump to the callee. */
        CALL,
        /** A direct jump or conditional jump, written anew by the assembler to reach the same target. */
        BRANCH,
        /** An indirect call ({@code ff /2}): the original return address pushed, then {@code jmp *} the same operand. */
        INDIRECT_CALL
    }

    /** A memory instruction moved, and recorded, in the trampoline of the short instruction before it. */
    record Covered(Instruction instruction) implements Decision {}

    /**
     * Traced through the int3 fallback (docs/rewriting.md, "Fallback"): a short instruction whose neighbours
     * cannot move keeps its place, its first byte becomes an {@code int3}, and the runtime's SIGTRAP handler
     * sends the thread to {@code patch}'s trampoline (one part: this instruction), which records it as any
     * trampoline does and jumps back after it.
     */
    record Trapped(Patch patch) implements Decision {
        public Instruction instruction() { return patch.instruction(); }
    }

    /**
     * A {@code syscall} that sets the signal mask ({@code rt_sigprocmask}: {@code mov $14,%eax} shortly before
     * it), not a memory instruction: it gets an {@code int3} too, and the runtime's handler does the call
     * with SIGTRAP (and SIGSEGV) left out of the mask, since a trap the thread blocks kills it (libc blocks
     * every signal itself inside pthread_create, a thread's start and end, posix_spawn). When %rax is not 14
     * after all, the handler sends the thread to {@code patch}'s trampoline, which makes the call and jumps
     * back after it.
     */
    record SignalMask(Patch patch) implements Decision {
        public Instruction instruction() { return patch.instruction(); }
    }

    /** Left untraced for {@code reason}: a probe cannot record it (the int3 fallback takes the short ones it can). */
    record Left(Instruction instruction, Reason reason) implements Decision {}

    /** Why an instruction was left; the summary counts each. */
    enum Reason {
        /** Fewer than 5 bytes in a module where runs are not moved (no symbol table, or C++ landing pads). */
        SHORT("short, in code without symbols or with landing pads"),
        /** A call the trampoline cannot emulate: a far call, one through %rsp or a segment, or a 32-bit address. */
        CALL("indirect calls"),
        /** Shorter than 5 bytes and its successors could not be moved with it (a branch target among them, a branch, a function with indirect jumps). */
        NEIGHBOURS("short, neighbours not movable"),
        /** A {@code %gs} operand, or an {@code %fs} one that is not the instruction's last access (the probe adds the thread pointer to that one only). */
        SEGMENT("%fs/%gs operands"),
        /** A vector-indexed (VSIB) operand, a 32-bit address or an access the probe cannot describe. */
        ADDRESSING("VSIB, 32-bit or over-wide operands"),
        /** A conditional rep string instruction (repe/repne cmps, scas), or rep on another instruction: as in {@code memtrace cc}, not recorded. */
        REP("rep string instructions");

        private final String words;

        Reason(String words) { this.words = words; }

        public String words() { return words; }
    }
}
