package org.memtrace.rewrite;

import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfFormatException;
import org.memtrace.x86.Flow;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.Register;
import org.memtrace.x86.RegisterEffect;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The general registers a trampoline's probe may use without saving them (docs/rewriting.md, "Probes without
 * saved registers"): those the code from the probe on overwrites whole before it reads them, along the one way
 * it may run, the trampoline's parts and then the module's instructions after the patch, through direct jumps
 * and both ways of conditional ones (dead only where dead on every way), at most 64 instructions ahead. A probe that saves nothing moves no stack pointer and stores nothing but its slots: on this
 * machine 0.6 ns a probe against 1.8 ns for the three pushes and pops of the GOT form (bench/results/rewrite-side.md).
 * The rules are {@code memtrace cc}'s (instrument.ProbeGroups): only a 32- or 64-bit write by an instruction
 * known to overwrite its destination kills a register; any other write, a partial one or a conditional one
 * counts as a read; a way ends, every undecided register live, at a call, an indirect jump, a return, a
 * system call or a trap (after its own reads), where the module's code is not contiguous, and when the
 * budget is spent (a loop's way back comes round again until then).
 *
 * <p>Nor is a register dead in a call-site range that has a landing pad (or in a function whose LSDA could not
 * be read), at the probe or anywhere a way goes: an unwinder leaving from an instruction that faults there
 * (gcc's {@code -fnon-call-exceptions}, glibc's asynchronous cancellation, which unwinds from the signal
 * frame) enters the pad with the registers the instruction stopped with, the probe's among them, and the pad
 * may read one that the way on overwrites. An exception a call throws is no such case: a way ends at a call.
 */
final class DeadRegisters {
    /** No register dead anywhere: every probe saves what it uses (tests, plans of code not swept). */
    static final DeadRegisters NONE = new DeadRegisters(List.of());

    /** How far past the patch the walk looks (straight-line code rarely runs longer before a branch). */
    private static final int MOST = 64;

    private final List<Instruction> code;
    private final Map<Long, Integer> index = new HashMap<>();
    /** Start to end of the code with landing pads, disjoint. */
    private final TreeMap<Long, Long> padded;

    /** Over {@code code}, the module's instructions in address order (the planner's sweep), no landing pads. */
    DeadRegisters(List<Instruction> code) { this(code, new TreeMap<>()); }

    /** The same, in a module whose code {@code padded} (start to end) has landing pads. */
    DeadRegisters(List<Instruction> code, TreeMap<Long, Long> padded) {
        this.code = code;
        this.padded = padded;
        for (int i = 0; i < code.size(); i++) index.put(code.get(i).address(), i);
    }

    /**
     * Over {@code code}, {@code elf}'s instructions the planner swept, its LSDAs' call sites read: those with a
     * landing pad, and the whole of a function whose LSDA could not be.
     */
    static DeadRegisters of(ElfFile elf, List<Instruction> code) throws ElfFormatException {
        List<EhFrame.Range> ranges = new ArrayList<>();
        for (EhFrame.Fde f : EhFrame.of(elf).fdes()) {
            if (f.opaque()) ranges.add(new EhFrame.Range(f.start(), f.end()));
            else ranges.addAll(f.padded());
        }
        ranges.sort(Comparator.comparingLong(EhFrame.Range::start));
        TreeMap<Long, Long> padded = new TreeMap<>();
        for (EhFrame.Range r : ranges) {
            var last = padded.lastEntry();
            if (last != null && r.start() <= last.getValue()) padded.put(last.getKey(), Math.max(last.getValue(), r.end()));
            else padded.put(r.start(), r.end());
        }
        return new DeadRegisters(code, padded);
    }

    /** {@code address} lies in code with landing pads. */
    private boolean padded(long address) {
        var f = padded.floorEntry(address);
        return f != null && address < f.getValue();
    }

    /** The 64-bit names of the registers dead where {@code p}'s part {@code from} is probed. */
    Set<String> at(Decision.Patch p, int from) {
        Set<String> dead = new HashSet<>(), live = new HashSet<>();
        List<Decision.Part> all = p.all();
        for (int k = from; k < all.size(); k++) {
            Instruction insn = all.get(k).instruction();
            if (padded(insn.address())) return dead;
            step(insn, dead, live);
            if (insn.flow() == Flow.SEQUENTIAL) continue;
            // a run's last part may be a conditional jump written anew: on to the run's end or to its target
            if (insn.flow() == Flow.CONDITIONAL_JUMP && k == all.size() - 1 && insn.branchTarget().isPresent())
                join(dead, live, both(index.get(p.resume()), index.get(insn.branchTarget().getAsLong()), MOST));
            return dead;
        }
        join(dead, live, from(index.get(p.resume()), MOST));
        return dead;
    }

    /**
     * The registers dead at the module's instruction {@code i} (null: none known), looking at most
     * {@code budget} instructions ahead along every way: through direct jumps, and on both ways of a
     * conditional jump (dead only where dead on both).
     */
    private Set<String> from(Integer i, int budget) {
        Set<String> dead = new HashSet<>(), live = new HashSet<>();
        for (int n = 0; i != null && i < code.size() && n < budget; n++) {
            Instruction insn = code.get(i);
            if (padded(insn.address())) return dead;
            step(insn, dead, live);
            switch (insn.flow()) {
                case SEQUENTIAL -> {
                    if (i + 1 >= code.size() || code.get(i + 1).address() != insn.nextAddress()) return dead;
                    i++;
                }
                case JUMP -> {
                    if (insn.branchTarget().isEmpty()) return dead;
                    i = index.get(insn.branchTarget().getAsLong());
                }
                case CONDITIONAL_JUMP -> {
                    if (insn.branchTarget().isPresent()) {
                        Integer next = i + 1 < code.size() && code.get(i + 1).address() == insn.nextAddress() ? i + 1 : null;
                        join(dead, live, both(next, index.get(insn.branchTarget().getAsLong()), (budget - n) / 2));
                    }
                    return dead;
                }
                default -> { return dead; }
            }
        }
        return dead;
    }

    /** What is dead on both ways. */
    private Set<String> both(Integer a, Integer b, int budget) {
        if (a == null || b == null || budget < 4) return Set.of();
        Set<String> dead = from(a, budget);
        dead.retainAll(from(b, budget));
        return dead;
    }

    /** The registers dead further on added to {@code dead}, but for those read before. */
    private static void join(Set<String> dead, Set<String> live, Set<String> further) {
        for (String r : further) if (!live.contains(r)) dead.add(r);
    }

    /** One instruction's reads and overwrites: a register read before it is overwritten stays live. */
    private static void step(Instruction insn, Set<String> dead, Set<String> live) {
        RegisterEffect e = RegisterEffect.of(insn);
        for (Register r : e.read()) if (!dead.contains(r.name())) live.add(r.name());
        for (Register r : e.overwritten()) if (!live.contains(r.name())) dead.add(r.name());
    }
}
