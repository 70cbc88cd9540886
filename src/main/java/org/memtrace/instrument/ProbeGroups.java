package org.memtrace.instrument;

import org.memtrace.format.SiteFormat;

import org.memtrace.x86.Flow;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.MemoryAccess;
import org.memtrace.x86.MemoryOperand;
import org.memtrace.x86.Operand;
import org.memtrace.x86.Register;
import org.memtrace.x86.RegisterOperand;

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
     * @param dead the general registers (64-bit names) dead where the probe stands: the code after it
     *             overwrites them before reading them (see {@link #dead})
     */
    record Group(List<Member> members, Set<String> dead) {
    }

    /**
     * The two registers of an executable's group probe, and which of them are dead (need no saving).
     *
     * @param cursor  holds the cursor: one of {@link #SCRATCH}, which the runtime's full-buffer handler decodes
     * @param address holds each address and site in turn
     */
    record Registers(String cursor, String address, boolean cursorDead, boolean addressDead) {
    }

    private static final Set<String> GENERAL = Set.of("rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9",
            "r10", "r11", "r12", "r13", "r14", "r15");

    /** Instructions after which a written 32- or 64-bit general register holds nothing of its old value. */
    private static final Set<String> OVERWRITING = Set.of("mov", "movzx", "movsx", "movsxd", "lea", "pop", "imul",
            "movd", "movq");

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
     * The general registers (64-bit names) that the code from {@code from} on overwrites whole before it
     * reads them: no instruction before that reads them, explicitly, implicitly or in an address. The search
     * ends at the next label or unnumbered code, at a control transfer (after its own reads) or at the
     * function's end; a register undecided there counts as live. A write of 8 or 16 bits, a conditional
     * write (cmov) and a write by an instruction not known to overwrite count as reads.
     */
    static Set<String> dead(List<FunctionPlanner.Decoded> code, int from, BitSet barrier) {
        Set<String> dead = new HashSet<>();
        Set<String> live = new HashSet<>();
        for (int k = from; k < code.size(); k++) {
            FunctionPlanner.Decoded d = code.get(k);
            if (k > from && barrier.get(d.index())) {
                break;
            }
            Instruction insn = d.instruction();
            List<String> overwritten = new ArrayList<>(2);
            for (Operand o : insn.operands()) {
                if (o instanceof MemoryOperand m) {
                    read(m.base(), dead, live);
                    read(m.index(), dead, live);
                } else if (o instanceof RegisterOperand r && !r.register().isNone()) {
                    int width = r.register().widthBits();
                    if (r.write() && !r.read() && (width == 64 || width == 32) && OVERWRITING.contains(insn.mnemonic())
                            && GENERAL.contains(r.register().enclosing().name())) {
                        overwritten.add(r.register().enclosing().name());
                    } else if (r.read() || r.write()) {
                        read(r.register(), dead, live);
                    }
                }
            }
            for (String r : overwritten) {
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

    private static void read(Register r, Set<String> dead, Set<String> live) {
        if (!r.isNone() && !dead.contains(r.enclosing().name())) {
            live.add(r.enclosing().name());
        }
    }

    /**
     * An executable's group probe's registers for {@code sites} (in program order): dead ones where there
     * are (read by no site, which their being dead already implies), else the first pair {@link #scratch}
     * allows, saved.
     */
    static Registers registers(List<Site> sites, Set<String> dead) {
        String[] saved = scratch(sites.subList(0, sites.size() - 1));
        String cursor = firstDead(SCRATCH, dead, sites, null);
        String address = firstDead(ADDRESS, dead, sites, cursor);
        String c = cursor != null ? cursor : saved[0].equals(address) ? saved[1] : saved[0];
        String a = address != null ? address : saved[0].equals(c) ? saved[1] : saved[0];
        return new Registers(c, a, cursor != null, address != null);
    }

    private static String firstDead(List<String> candidates, Set<String> dead, List<Site> sites, String taken) {
        for (String r : candidates) {
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
    static final List<String> SCRATCH = List.of("rdx", "r11", "r10", "r9", "r8", "rsi", "rdi", "rcx", "rbx", "r14", "r15");

    /** Registers a probe without saves may hold the addresses in: any but the four above. */
    static final List<String> ADDRESS = List.of("rax", "rdx", "r11", "r10", "r9", "r8", "rsi", "rdi", "rcx",
            "rbx", "r14", "r15");

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
