package org.memtrace.instrument;

import org.memtrace.format.SiteFormat;

import org.memtrace.x86.Flow;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.MemoryAccess;
import org.memtrace.x86.Register;
import org.memtrace.x86.RegisterEffect;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Gathers the probes of consecutive instructions into one probe written before the first of them
 * (docs/compiled-in.md, "The probe"): the registers are saved and the cursor is loaded and bumped once per
 * group instead of once per instruction. An instruction joins the group of an earlier one when its
 * addresses can be computed there already: nothing in between passes control elsewhere (a jump, call,
 * return, trap or system call), carries a label (a jump target), runs unnumbered code (inline assembly) or
 * writes a register its addresses read. Inside the probe two scratch registers hold the cursor and its TLS
 * offset, chosen among those the addresses computed after the cursor load do not read (all but the group's
 * last site, computed first: its store is the one that may reach the guard page); rep string instructions
 * keep a probe of their own. Where two of those registers are dead at the group's first instruction (the
 * code after it overwrites them before reading them), an executable's probe uses them without saving them.
 */
final class ProbeGroups {
    /** Sites of one group: the first store of the probe then lies within 112 bytes of the cursor (a disp8). */
    static final int MAX_SITES = 8;

    /** One instruction of a group and its sites. */
    record Member(int index, List<Site> sites) {
    }

    /**
     * The instructions of one probe.
     *
     * @param dead the general registers (64-bit) dead where the probe stands: the code after it overwrites
     *             them before reading them (see {@link #dead})
     */
    record Group(List<Member> members, Set<Register> dead) {
    }

    /**
     * The two registers of an executable's group probe, and which of them are dead (need no saving).
     *
     * @param cursor  holds the cursor: one of {@link #SCRATCH}, which the runtime's full-buffer handler decodes
     * @param address holds each address and site in turn
     */
    record Registers(Register cursor, Register address, boolean cursorDead, boolean addressDead) {
    }

    static final Register RAX = Register.named("rax"), RSP = Register.named("rsp");

    private ProbeGroups() {
    }

    /**
     * The groups of one function, keyed by the index of their first instruction; the other members get no
     * probe of their own.
     *
     * @param code    the function's decoded instructions, in order
     * @param probes  the planned sites by instruction index
     * @param barrier instruction indices preceded by a label or unnumbered code since the instruction before
     */
    static Map<Integer, Group> group(List<FunctionPlanner.Decoded> code, Map<Integer, List<Site>> probes,
                                     BitSet barrier) {
        Map<Integer, List<Member>> groups = new HashMap<>();
        Map<Integer, Integer> positions = new HashMap<>();
        List<Member> open = null;
        int sites = 0;
        Set<Integer> written = new HashSet<>();
        for (int position = 0; position < code.size(); position++) {
            FunctionPlanner.Decoded d = code.get(position);
            Instruction insn = d.instruction();
            List<Site> own = probes.get(d.index());
            if (open != null && barrier.get(d.index())) {
                open = null;
            }
            if (own != null) {
                boolean groupable = groupable(own);
                if (open != null && groupable && sites + own.size() <= MAX_SITES && fits(open, own)
                        && !readsAny(insn, written)) {
                    open.add(new Member(d.index(), own));
                    sites += own.size();
                } else {
                    open = new ArrayList<>();
                    open.add(new Member(d.index(), own));
                    groups.put(d.index(), open);
                    positions.put(d.index(), position);
                    sites = own.size();
                    written.clear();
                    if (!groupable) {
                        open = null; // written by the probe of one instruction, alone
                    }
                }
            }
            if (open != null) {
                if (insn.flow() != Flow.SEQUENTIAL) {
                    open = null;
                } else {
                    for (Register r : insn.registersWritten()) {
                        written.add(r.enclosing().id());
                    }
                }
            }
        }
        Map<Integer, Group> result = new HashMap<>();
        groups.forEach((first, members) -> result.put(first, new Group(members, dead(code, positions.get(first), barrier))));
        return result;
    }

    /**
     * The general registers (64-bit) that the code from {@code from} on overwrites whole before it
     * reads them: no instruction before that reads them, explicitly, implicitly or in an address. The search
     * ends at the next label or unnumbered code, at a control transfer (after its own reads) or at the
     * function's end; a register undecided there counts as live. A write of 8 or 16 bits, a conditional
     * write (cmov) and a write by an instruction not known to overwrite count as reads.
     */
    static Set<Register> dead(List<FunctionPlanner.Decoded> code, int from, BitSet barrier) {
        Set<Register> dead = new HashSet<>();
        Set<Register> live = new HashSet<>();
        for (int k = from; k < code.size(); k++) {
            FunctionPlanner.Decoded d = code.get(k);
            if (k > from && barrier.get(d.index())) {
                break;
            }
            Instruction insn = d.instruction();
            RegisterEffect e = RegisterEffect.of(insn);
            for (Register r : e.read()) {
                if (!dead.contains(r)) {
                    live.add(r);
                }
            }
            for (Register r : e.overwritten()) {
                if (!live.contains(r)) {
                    dead.add(r);
                }
            }
            if (insn.flow() != Flow.SEQUENTIAL) {
                break;
            }
        }
        return dead;
    }

    /**
     * An executable's group probe's registers for {@code sites} (in program order): dead ones where there
     * are (read by no site, which their being dead already implies), else the first pair {@link #scratch}
     * allows, saved.
     */
    static Registers registers(List<Site> sites, Set<Register> dead) {
        Register[] saved = scratch(sites.subList(0, sites.size() - 1));
        Register cursor = firstDead(SCRATCH, dead, sites, null);
        Register address = firstDead(ADDRESS, dead, sites, cursor);
        Register c = cursor != null ? cursor : saved[0].equals(address) ? saved[1] : saved[0];
        Register a = address != null ? address : saved[0].equals(c) ? saved[1] : saved[0];
        return new Registers(c, a, cursor != null, address != null);
    }

    private static Register firstDead(List<Register> candidates, Set<Register> dead, List<Site> sites, Register taken) {
        for (Register r : candidates) {
            if (!r.equals(taken) && dead.contains(r) && sites.stream().noneMatch(s -> reads(s, r))) {
                return r;
            }
        }
        return null;
    }

    /**
     * The registers the probe of a group may hold its cursor and the cursor's TLS offset (in an executable's
     * probe: the addresses) in: not %rax (the GOT form's address; reloaded from the stack for an address that
     * reads it), not %rsp, %rbp, %r12, %r13 (their encodings take a SIB byte or mean rip-relative, and the
     * runtime decodes the probe's two instructions).
     */
    static final List<Register> SCRATCH = named("rdx", "r11", "r10", "r9", "r8", "rsi", "rdi", "rcx", "rbx", "r14", "r15");

    /** Registers a probe without saves may hold the addresses in: any but the four above. */
    static final List<Register> ADDRESS = named("rax", "rdx", "r11", "r10", "r9", "r8", "rsi", "rdi", "rcx", "rbx", "r14",
            "r15");

    /** The registers called {@code names} (Zydis's spelling), in their order. */
    private static List<Register> named(String... names) {
        return java.util.Arrays.stream(names).map(Register::named).toList();
    }

    /** An instruction's sites fit one group probe: no rep string instruction, scratch registers left for all but its last. */
    static boolean groupable(List<Site> sites) {
        for (Site s : sites) {
            if (s.kind() >= SiteFormat.REP_DESTINATION) {
                return false;
            }
        }
        return scratch(sites.subList(0, sites.size() - 1)) != null;
    }

    /**
     * The cursor and TLS-offset registers for sites computed after the cursor is loaded: the first two
     * scratch registers none of them reads; null when fewer are left or one needs the thread pointer.
     */
    static Register[] scratch(List<Site> computedLater) {
        Register[] pair = new Register[2];
        int found = 0;
        for (Register r : SCRATCH) {
            boolean used = false;
            for (Site s : computedLater) {
                if (s.fs() || reads(s, r)) {
                    if (s.fs()) {
                        return null;
                    }
                    used = true;
                }
            }
            if (!used) {
                pair[found++] = r;
                if (found == 2) {
                    return pair;
                }
            }
        }
        return null;
    }

    /**
     * Whether the site's address text names the 64-bit register {@code r} or its 32-bit half: a site keeps
     * the address as gcc spelled it, which the probe's {@code lea} repeats.
     */
    static boolean reads(Site s, Register r) {
        String a = s.address();
        String name = r.name();
        String half = name.startsWith("r") && Character.isDigit(name.charAt(1)) ? name + "d" : "e" + name.substring(1);
        return a.contains("%" + name + ",") || a.contains("%" + name + ")") || a.contains("%" + half);
    }

    /** The group, extended by {@code own}, still leaves two scratch registers for every site but the new last. */
    private static boolean fits(List<Member> group, List<Site> own) {
        List<Site> later = new ArrayList<>();
        for (Member m : group) {
            later.addAll(m.sites());
        }
        later.addAll(own.subList(0, own.size() - 1));
        return scratch(later) != null;
    }

    private static boolean readsAny(Instruction insn, Set<Integer> written) {
        if (written.isEmpty()) {
            return false;
        }
        for (MemoryAccess a : insn.accesses()) {
            Register base = a.operand().base();
            Register index = a.operand().index();
            if (!base.isNone() && written.contains(base.enclosing().id())
                    || !index.isNone() && written.contains(index.enclosing().id())) {
                return true;
            }
        }
        return false;
    }
}
