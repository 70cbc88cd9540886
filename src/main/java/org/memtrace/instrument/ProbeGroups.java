package org.memtrace.instrument;

import org.memtrace.x86.Flow;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.MemoryAccess;
import org.memtrace.x86.Register;

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
 * keep a probe of their own.
 */
final class ProbeGroups {
    /** Sites of one group: the first store of the probe then lies within 112 bytes of the cursor (a disp8). */
    static final int MAX_SITES = 8;

    /** One instruction of a group and its sites. */
    record Member(int index, List<Site> sites) {
    }

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
    static Map<Integer, List<Member>> group(List<FunctionPlanner.Decoded> code, Map<Integer, List<Site>> probes,
                                            BitSet barrier) {
        Map<Integer, List<Member>> groups = new HashMap<>();
        List<Member> open = null;
        int sites = 0;
        Set<Integer> written = new HashSet<>();
        for (FunctionPlanner.Decoded d : code) {
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
        return groups;
    }

    /**
     * The registers the probe of a group may hold its cursor and the cursor's TLS offset (in an executable's
     * probe: the addresses) in: not %rax (the GOT form's address; reloaded from the stack for an address that
     * reads it), not %rsp, %rbp, %r12, %r13 (their encodings take a SIB byte or mean rip-relative, and the
     * runtime decodes the probe's two instructions).
     */
    static final List<String> SCRATCH = List.of("rdx", "r11", "r10", "r9", "r8", "rsi", "rdi", "rcx", "rbx", "r14", "r15");

    /** An instruction's sites fit one group probe: no rep string instruction, scratch registers left for all but its last. */
    static boolean groupable(List<Site> sites) {
        for (Site s : sites) {
            if (s.kind() >= Site.REP_DESTINATION) {
                return false;
            }
        }
        return scratch(sites.subList(0, sites.size() - 1)) != null;
    }

    /**
     * The cursor and TLS-offset registers for sites computed after the cursor is loaded: the first two
     * scratch registers none of them reads; null when fewer are left or one needs the thread pointer.
     */
    static String[] scratch(List<Site> computedLater) {
        String[] pair = new String[2];
        int found = 0;
        for (String r : SCRATCH) {
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

    /** Whether the site's address text names the 64-bit register {@code r} or its 32-bit half. */
    static boolean reads(Site s, String r) {
        String a = s.address();
        String half = r.startsWith("r") && Character.isDigit(r.charAt(1)) ? r + "d" : "e" + r.substring(1);
        return a.contains("%" + r + ",") || a.contains("%" + r + ")") || a.contains("%" + half);
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
