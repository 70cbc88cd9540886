package org.memtrace.rewrite;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.memtrace.x86.Flow;
import org.memtrace.x86.Instruction;

/**
 * Dead padding (docs/rewriting.md, "Dead padding"): the nops an assembler puts after a {@code ret} or a
 * {@code jmp} to align what follows never run, unless something jumps to one, which the planner's targets
 * say. Their bytes are room for a jump, for two tactics that need no knowledge of the function around them:
 * <ul>
 *   <li>{@link #after}: a short instruction that does not fall through (a {@code ret} after a loop's closing
 *       {@code jne}, reached by a branch, so its run cannot take the instructions before it) takes the padding
 *       after it into its patch, so the {@code jmp rel32} covers it and dead nops;</li>
 *   <li>{@link #near} (E9Patch's neighbour eviction, with dead bytes as the neighbour): a short instruction of
 *       2 bytes or more gets a {@code jmp rel8} to padding within reach, whose first 5 bytes become the
 *       {@code jmp rel32} to its trampoline, which goes back after the instruction.</li>
 * </ul>
 * A stretch of padding is taken once; a run's predecessors never take it ({@link #taken}).
 */
final class Padding {
    /** The farthest a {@code jmp rel8} reaches either way (from the end of its 2 bytes). */
    private static final int REL8 = 127;

    private final List<Instruction> all;
    private final List<byte[]> bytes;
    private final Set<Long> targets;
    private final long hookFrom, hookTo;
    private final Map<Long, Integer> index = new HashMap<>();
    private final Set<Long> taken = new HashSet<>();

    /** {@code hook}: 5 bytes that are the runtime's (ld.so's {@code _dl_debug_state}), -1: none. */
    Padding(List<Instruction> all, List<byte[]> bytes, Set<Long> targets, long hook) {
        this.all = all;
        this.bytes = bytes;
        this.targets = targets;
        this.hookFrom = hook;
        this.hookTo = hook < 0 ? hook : hook + PatchPlanner.JUMP_LENGTH;
        for (int i = 0; i < all.size(); i++) index.put(all.get(i).address(), i);
    }

    /** Whether a patch of this class holds the instruction at {@code address}: no run may take it. */
    boolean taken(long address) { return taken.contains(address); }

    /**
     * The dead nops from {@code end} on (the instruction before them does not fall through) up to the first
     * that ends at {@code need} or after, taken; null when there are not enough of them.
     */
    List<Decision.Part> after(long end, long need) {
        Integer j = index.get(end);
        if (j == null || j == 0 || fallsThrough(all.get(j - 1))) return null;
        List<Decision.Part> out = new ArrayList<>();
        for (long at = end; at < need; j++) {
            if (j >= all.size() || !dead(j) || all.get(j).address() != at || taken.contains(at)) return null;
            out.add(new Decision.Part(all.get(j), bytes.get(j), List.of(), -1, Decision.Move.COPY));
            at = all.get(j).nextAddress();
        }
        for (Decision.Part n : out) taken.add(n.instruction().address());
        return out;
    }

    /**
     * Dead padding within a {@code jmp rel8}'s reach of {@code insn} with 5 bytes of room for a
     * {@code jmp rel32}, taken; null when none ({@code insn} shorter than 2 bytes, no padding near). The
     * padding must start at or after {@code consumed} (the bytes before belong to patches already made).
     */
    Decision.Via near(Instruction insn, long consumed) {
        if (insn.length() < 2) return null;
        long from = insn.address() + 2;
        Integer at = index.get(insn.address());
        if (at == null) return null;
        long best = -1;
        // nearest first: the closest stretch leaves farther ones to other instructions
        for (int d = 1; d < 64; d++) {
            for (int j : new int[] {at - d, at + d}) {
                if (j < 0 || j >= all.size()) continue;
                long p = all.get(j).address();
                if (p < consumed || p - from < -REL8 - 1 || p - from > REL8) continue;
                if (room(j)) {
                    best = p;
                    break;
                }
            }
            if (best >= 0) break;
        }
        if (best < 0) return null;
        byte[] old = new byte[PatchPlanner.JUMP_LENGTH];
        int n = 0;
        for (int j = index.get(best); n < old.length; j++) {
            taken.add(all.get(j).address());
            for (byte b : bytes.get(j)) if (n < old.length) old[n++] = b;
        }
        return new Decision.Via(best, old);
    }

    /** Whether the dead nops from {@code all[j]} on, none taken, give a jump's 5 bytes. */
    private boolean room(int j) {
        long start = all.get(j).address(), at = start;
        if (!dead(j) || !deadBefore(j)) return false;
        for (int k = j; at < start + PatchPlanner.JUMP_LENGTH; k++) {
            if (k >= all.size() || all.get(k).address() != at || !dead(k) || taken.contains(at)) return false;
            at = all.get(k).nextAddress();
        }
        return true;
    }

    /** Whether {@code all[j]} is preceded, through contiguous dead nops, by an instruction that does not fall through. */
    private boolean deadBefore(int j) {
        for (int k = j - 1; k >= 0; k--) {
            if (all.get(k).nextAddress() != all.get(k + 1).address()) return false;
            if (!dead(k)) return !fallsThrough(all.get(k));
        }
        return false;
    }

    /** A nop nothing jumps to, outside the runtime's hook (whether anything falls into it: {@link #deadBefore}). */
    private boolean dead(int j) {
        Instruction n = all.get(j);
        if (targets.contains(n.address()) || n.address() < hookTo && n.nextAddress() > hookFrom) return false;
        return nop(bytes.get(j));
    }

    /** {@code 90}, {@code 66 90} or {@code 0f 1f /0}, after operand-size and segment prefixes (gas's padding). */
    static boolean nop(byte[] b) {
        int k = 0;
        while (k < b.length && ((b[k] & 0xff) == 0x66 || (b[k] & 0xff) == 0x2e || (b[k] & 0xff) == 0x3e)) k++;
        if (k == b.length - 1) return (b[k] & 0xff) == 0x90;
        return k + 1 < b.length && (b[k] & 0xff) == 0x0f && (b[k + 1] & 0xff) == 0x1f;
    }

    /** Whether control goes on to the next instruction after {@code insn} (a call returns there). */
    private static boolean fallsThrough(Instruction insn) {
        return insn.flow() != Flow.RETURN && insn.flow() != Flow.JUMP && insn.flow() != Flow.TRAP;
    }
}
