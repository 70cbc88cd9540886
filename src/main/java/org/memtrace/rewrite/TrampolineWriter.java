package org.memtrace.rewrite;

import org.memtrace.format.SiteFormat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.memtrace.x86.Flow;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.MemoryAccess;
import org.memtrace.x86.MemoryOperand;
import org.memtrace.x86.Operand;
import org.memtrace.x86.RegisterOperand;
import org.memtrace.x86.Register;

/**
 * The assembly text of a module's trampolines and its site table (docs/rewriting.md, "Trampolines"). Each
 * trampoline is the group probe of docs/compiled-in.md in its GOT form (so the runtime's full-buffer and
 * signal handling recognize it byte for byte), then the instruction's own bytes and a jump back; consecutive
 * parts of a trampoline share one such probe where {@link ProbeRuns} allows. Addresses
 * of the module are written {@code mt_base+ADDR} (link-time addresses; the linker script sets
 * {@code mt_base} to 0 and places the text at {@link #base}), so the linker computes every {@code rel32}
 * and refuses one that does not reach. The cursor's offset from the thread pointer, known only at run
 * time, sits in the quad {@code cursor_slot} that the runtime fills before it maps the text executable.
 */
final class TrampolineWriter {
    /** What a probe pushes below the program's %rsp: the red zone and three saved registers. */
    static final int STACK_STEP = 152;
    /** Scratch registers for the cursor and its offset, in the order the compiled-in probe takes them. */
    private static final List<String> SCRATCH = List.of("rdx", "r11", "r10", "r9", "r8", "rsi", "rdi", "rcx", "rbx", "r14", "r15");
    /** The most bytes {@code p}'s trampoline takes (for placing the text before it is assembled). */
    static long bound(Decision.Patch p) { return 40 + 128L * p.all().size() + 40L * p.sites(); }

    static final int KIND_LOAD = SiteFormat.LOAD, KIND_STORE = SiteFormat.STORE, KIND_MODIFY = SiteFormat.MODIFY;
    static final int FLAG_IMPLICIT_STACK = SiteFormat.FLAG_IMPLICIT_STACK;

    private TrampolineWriter() {}

    /** The assembly of {@code patches}' trampolines, the N-th labelled {@code mt_tN}: every access recorded, each site weighing 1. */
    static String assembly(List<Decision.Patch> patches) { return assembly(patches, Probes.RECORD, SiteWeights.FULL); }

    /**
     * The same, each part's accesses checked ({@link CheckProbe}) and/or recorded, as {@code probes} says, the
     * site table's weight and block fields from {@code weights} (a selection, {@code --omega}).
     */
    static String assembly(List<Decision.Patch> patches, Probes probes, SiteWeights weights) {
        return assembly(patches, probes, weights, StackSlots.NONE);
    }

    /** The same, the direct accesses to the stack variables {@code slots} names checked against them. */
    static String assembly(List<Decision.Patch> patches, Probes probes, SiteWeights weights, StackSlots slots) {
        return assembly(patches, probes, weights, slots, DeadRegisters.NONE);
    }

    /** The same, a recording probe keeping its registers in those {@code dead} finds dead where it can. */
    static String assembly(List<Decision.Patch> patches, Probes probes, SiteWeights weights, StackSlots slots, DeadRegisters dead) {
        var text = new StringBuilder("\t.text\ncursor_slot:\n\t.quad 0\n");
        var sites = new StringBuilder("\t.section memtrace_sites,\"a\",@progbits\n\t.balign 8\n");
        int site = 0;
        // a direct jump or call to an instruction some trampoline starts with goes straight there: arriving at the
        // instruction (its jump, its int3, its pun) would lead there anyway, after a trap for the int3 fallback's
        // (a branch of a run or tail landing on a trapped return: 15,127 traps of python3's JSON bench); never to
        // a sigprocmask site's, whose trap the handler emulates itself
        Map<Long, String> entries = new HashMap<>();
        for (int n = 0; n < patches.size(); n++)
            if (patches.get(n).instruction().flow() != Flow.SYSTEM_CALL) entries.putIfAbsent(patches.get(n).instruction().address(), "mt_t" + n);
        java.util.function.LongFunction<String> to = a -> entries.getOrDefault(a, "mt_base+" + a);
        for (int n = 0; n < patches.size(); n++) {
            Decision.Patch p = patches.get(n);
            text.append("mt_t").append(n).append(":\n");
            List<Decision.Part> all = p.all();
            for (int k = 0; k < all.size();) {
                // record-only: a run of parts shares one probe (ProbeRuns); checked, each part has its own
                List<Long> run = probes.checks() || !probes.records() ? List.of(0L) : ProbeRuns.run(all, k);
                List<Site> runSites = new ArrayList<>();
                List<List<Site>> own = new ArrayList<>();
                for (int m = 0; m < run.size(); m++) {
                    Decision.Part part = all.get(k + m);
                    if (probes.checks()) CheckProbe.emit(text, part, "mt_c" + n + "_" + (k + m), slots);
                    own.add(probes.records() ? sites(part, run.get(m)) : List.of());
                    runSites.addAll(own.getLast());
                }
                List<String> labels = new ArrayList<>();
                for (int i = 0; i < runSites.size(); i++) labels.add("mt_s" + site++);
                if (!labels.isEmpty()) probe(text, runSites, labels, probes.checks() ? Set.of() : dead.at(p, k));
                int label = 0;
                for (int m = 0; m < run.size(); m++) {
                    Decision.Part part = all.get(k + m);
                    move(text, part, to);
                    for (int i = 0; i < own.get(m).size(); i++)
                        entry(sites, labels.get(label++), part, own.get(m).get(i), weights.fields(part.instruction().address(), i));
                }
                k += run.size();
            }
            // after a call, a return or a jump nothing falls through; after a conditional jump, the run's end
            // (a conditional jump inside a tail falls through to the next copy);
            // after a system call (the int3 fallback's sigprocmask sites, alone), the instruction after it;
            // after a tail, the instruction after its last copy
            Instruction last = p.all().getLast().instruction();
            if (last.flow() == Flow.SEQUENTIAL || last.flow() == Flow.CONDITIONAL_JUMP || last.flow() == Flow.SYSTEM_CALL)
                text.append("\tjmp ").append(to.apply(p.resume())).append('\n');
        }
        return text.append(sites).toString();
    }

    /** A part's own bytes, or its call or branch written anew, after its probe. */
    private static void move(StringBuilder text, Decision.Part part, java.util.function.LongFunction<String> to) {
        switch (part.move()) {
            case CALL -> call(text, part, to.apply(part.instruction().branchTarget().orElseThrow()));
            case INDIRECT_CALL -> call(text, part, "*" + callee(part.instruction()));
            case BRANCH -> text.append('\t').append(part.instruction().mnemonic()).append(' ')
                    .append(to.apply(part.instruction().branchTarget().orElseThrow())).append('\n');
            case COPY -> body(text, part);
        }
    }

    /**
     * What one probe site computes: the {@code lea} source of its address ({@code %rsp}-based ones stepped
     * over what the probe pushed), the registers that reads, whether the thread pointer is added (an
     * {@code %fs} operand), and its site table fields.
     */
    record Site(String address, List<String> reads, boolean fs, int kind, int size, int access, int flags, MemoryOperand operand, long rspDelta) {
        /** The address as a {@code lea} source when the probe moved %rsp by {@code step} (a %rsp-based one stepped over it). */
        String address(long step) { return operand == null ? address : TrampolineWriter.address(operand, step + rspDelta); }
    }

    static final int KIND_REP_DESTINATION = SiteFormat.REP_DESTINATION, KIND_REP_SOURCE = SiteFormat.REP_SOURCE,
            KIND_REP_COUNT = SiteFormat.REP_COUNT;

    /**
     * A part's sites, one per access in Zydis's order; a rep string instruction's as {@code memtrace cc}
     * writes them (docs/compiled-in.md, "The probe"): its pointers (kinds 4, 5) and then its count (%rcx,
     * kind 6), the size one element's, the direction flag assumed clear.
     */
    static List<Site> sites(Decision.Part part) { return sites(part, 0); }

    /** The same, for a part that runs when %rsp is {@code rspDelta} from where it was at the probe (ProbeRuns). */
    static List<Site> sites(Decision.Part part, long rspDelta) {
        List<Site> out = new ArrayList<>();
        boolean rep = part.repString();
        int element = 0;
        for (int i = 0; i < part.accesses().size(); i++) {
            MemoryAccess a = part.accesses().get(i);
            MemoryOperand m = a.operand();
            int kind = rep ? (m.base().name().equals("rsi") ? KIND_REP_SOURCE : KIND_REP_DESTINATION)
                    : a.read() && a.write() ? KIND_MODIFY : a.write() ? KIND_STORE : KIND_LOAD;
            List<String> reads = new ArrayList<>();
            if (!m.base().isNone()) reads.add(name(m.base()));
            if (!m.index().isNone()) reads.add(name(m.index()));
            out.add(new Site(address(m, STACK_STEP + rspDelta), reads, m.segment().name().equals("fs"), kind, a.sizeBytes(), index(part, a),
                    a.implicitStack() ? FLAG_IMPLICIT_STACK : 0, m, rspDelta));
            element = a.sizeBytes();
        }
        if (rep && !out.isEmpty())
            out.add(new Site("(%rcx)", List.of("rcx"), false, KIND_REP_COUNT, element, part.instruction().accesses().size(), 0, null, 0));
        return out;
    }

    /** The access's index among all the instruction's accesses (a selection without stack records only some, {@code memtrace cc}'s numbering). */
    private static int index(Decision.Part part, MemoryAccess a) {
        List<MemoryAccess> all = part.instruction().accesses();
        for (int i = 0; i < all.size(); i++) if (all.get(i) == a) return i;
        return part.accesses().indexOf(a);
    }

    /**
     * The group probe of one part's sites: the last one's slot is stored first (the guard page). An {@code %fs}
     * site is always the last (the planner sees to it): the thread pointer is added to its address before the
     * cursor is loaded, in the compiled-in form {@code mov %fs:0,C; lea (%rax,C),%rax}.
     */
    private static void probe(StringBuilder s, List<Site> a, List<String> labels, Set<String> dead) {
        int n = a.size();
        String[] free = unsaved(a, dead);
        if (free != null) {
            unsavedProbe(s, a, labels, free[0], free[1]);
            return;
        }
        String[] pair = scratch(a.subList(0, n - 1));
        String c = pair[0], t = pair[1];
        s.append("\tlea -128(%rsp),%rsp\n\tpush %rax\n\tpush %").append(c).append("\n\tpush %").append(t).append('\n');
        s.append(labels.get(n - 1)).append(":\n\tlea ").append(a.get(n - 1).address()).append(",%rax\n");
        if (a.get(n - 1).fs()) s.append("\tmov %fs:0,%").append(c).append("\n\tlea (%rax,%").append(c).append("),%rax\n");
        s.append("\tmov cursor_slot(%rip),%").append(t).append("\n\tmov %fs:(%").append(t).append("),%").append(c).append('\n');
        store(s, labels.get(n - 1), c, n - 1);
        for (int i = 0; i < n - 1; i++) {
            if (a.get(i).fs()) throw new IllegalStateException("an %fs operand that is not the last access");
            if (a.get(i).reads().contains("rax")) s.append("\tmov 16(%rsp),%rax\n");
            s.append(labels.get(i)).append(":\n\tlea ").append(a.get(i).address()).append(",%rax\n");
            store(s, labels.get(i), c, i);
        }
        s.append("\tlea ").append(16 * n).append("(%").append(c).append("),%").append(c).append('\n');
        s.append("\tmov %").append(c).append(",%fs:(%").append(t).append(")\n");
        s.append("\tpop %").append(t).append("\n\tpop %").append(c).append("\n\tpop %rax\n\tlea 128(%rsp),%rsp\n");
    }

    private static void store(StringBuilder s, String label, String c, int slot) { store(s, label, "rax", c, slot); }

    private static void store(StringBuilder s, String label, String a, String c, int slot) {
        s.append("\tmov %").append(a).append(',').append(slot == 0 ? "" : 16 * slot).append("(%").append(c).append(")\n");
        s.append("\tlea ").append(label).append("(%rip),%").append(a).append('\n');
        s.append("\tmov %").append(a).append(',').append(16 * slot + 8).append("(%").append(c).append(")\n");
    }

    /**
     * The address and cursor registers of a probe that saves none (A, C): two registers dead at the probe that
     * no site's address reads, A %rax when it is one of them, C from the scratch list (the runtime finds a
     * cursor only in those: mt_probe_greg); null when there are not two.
     */
    private static String[] unsaved(List<Site> a, Set<String> dead) {
        List<String> free = new ArrayList<>();
        for (String r : SCRATCH) if (dead.contains(r) && a.stream().noneMatch(x -> x.reads().contains(r))) free.add(r);
        String address = dead.contains("rax") && a.stream().noneMatch(x -> x.reads().contains("rax")) ? "rax" : free.size() > 1 ? free.removeLast() : null;
        return address == null || free.isEmpty() ? null : new String[] {address, free.getFirst()};
    }

    /**
     * The GOT form's group probe in two registers the program no longer needs ({@link DeadRegisters}): nothing
     * saved, %rsp not moved, nothing stored on the stack, %rsp-based addresses not stepped. The cursor's
     * offset is loaded into C itself ({@code mov %fs:(C),C}) and again into A for the commit, after the last
     * slot's store, so no third register holds it: {@code mov cursor_slot(%rip),A; lea 16n(C),C; mov
     * C,%fs:(A)}. The runtime's readers of probes take A for %rax and that reload as one more write of A
     * (rt_probe.c, mt_probe.h).
     */
    private static void unsavedProbe(StringBuilder s, List<Site> a, List<String> labels, String address, String c) {
        int n = a.size();
        s.append(labels.get(n - 1)).append(":\n\tlea ").append(a.get(n - 1).address(0)).append(",%").append(address).append('\n');
        if (a.get(n - 1).fs()) s.append("\tmov %fs:0,%").append(c).append("\n\tlea (%").append(address).append(",%").append(c).append("),%").append(address).append('\n');
        s.append("\tmov cursor_slot(%rip),%").append(c).append("\n\tmov %fs:(%").append(c).append("),%").append(c).append('\n');
        store(s, labels.get(n - 1), address, c, n - 1);
        for (int i = 0; i < n - 1; i++) {
            if (a.get(i).fs()) throw new IllegalStateException("an %fs operand that is not the last access");
            s.append(labels.get(i)).append(":\n\tlea ").append(a.get(i).address(0)).append(",%").append(address).append('\n');
            store(s, labels.get(i), address, c, i);
        }
        s.append("\tmov cursor_slot(%rip),%").append(address).append('\n');
        s.append("\tlea ").append(16 * n).append("(%").append(c).append("),%").append(c).append('\n');
        s.append("\tmov %").append(c).append(",%fs:(%").append(address).append(")\n");
    }

    /** The instruction's bytes, its RIP-relative displacement re-aimed from here. */
    private static void body(StringBuilder s, Decision.Part p) {
        byte[] b = p.bytes();
        int rip = p.ripDisplacement();
        bytes(s, b, 0, rip < 0 ? b.length : rip);
        if (rip >= 0) {
            long target = p.instruction().nextAddress() + PatchPlanner.readInt(b, rip);
            s.append("\t.long mt_base+").append(target).append(" - . - ").append(b.length - rip).append('\n');
            bytes(s, b, rip + 4, b.length);
        }
    }

    /**
     * A call, emulated: the original return address pushed (through %rax, saved and restored below it; lea
     * and mov leave the flags alone), then a jump to {@code target} (the callee, or {@code *operand} of an
     * indirect call, read after the push), so the callee returns to the module.
     */
    private static void call(StringBuilder s, Decision.Part p, String target) {
        s.append("\tlea -8(%rsp),%rsp\n\tpush %rax\n\tlea mt_base+").append(p.instruction().nextAddress())
                .append("(%rip),%rax\n\tmov %rax,8(%rsp)\n\tpop %rax\n\tjmp ").append(target).append('\n');
    }

    /** An indirect call's operand as {@code jmp *} takes it after the return address is pushed (%rsp 8 lower). */
    static String callee(Instruction insn) {
        for (Operand o : insn.operands()) {
            if (o instanceof RegisterOperand r && r.visibility() == Operand.Visibility.EXPLICIT) return "%" + r.register().name();
            if (o instanceof MemoryOperand m && m.visibility() == Operand.Visibility.EXPLICIT) return address(m, 8);
        }
        throw new IllegalStateException("an indirect call without an explicit operand");
    }

    private static void bytes(StringBuilder s, byte[] b, int from, int to) {
        if (from >= to) return;
        s.append("\t.byte ");
        for (int i = from; i < to; i++) s.append(i > from ? "," : "").append(b[i] & 0xff);
        s.append('\n');
    }

    /**
     * One 24-byte site table entry (docs/compiled-in.md, "The site table"), written by {@link SiteFormat#directives},
     * the function {@code memtrace cc}'s writer calls too, beside the reader's {@code decode}; {@code w} its
     * weights, block fields and extra flags ({@link SiteWeights#fields}).
     */
    private static void entry(StringBuilder s, String label, Decision.Part p, Site site, int[] w) {
        s.append(SiteFormat.directives(label, "mt_base+" + p.instruction().address(), site.kind(), site.size(), site.access(),
                site.flags() | w[5], w[0], w[1], w[2], w[3], w[4]));
    }

    /** The operand's address as a {@code lea} source inside the probe (%rsp-based ones step over what it pushed). */
    static String address(MemoryOperand m) { return address(m, STACK_STEP); }

    /** The operand's address with {@code step} added to a %rsp-based one; without its segment. */
    private static String address(MemoryOperand m, long step) {
        long disp = m.displacement();
        if (m.isRipRelative()) return "mt_base+" + m.staticAddress().orElseThrow() + "(%rip)";
        if (m.base().isStackPointer()) disp += step;
        if (m.base().isNone() && m.index().isNone()) return Long.toString(disp);
        var s = new StringBuilder();
        if (disp != 0) s.append(disp);
        s.append('(');
        if (!m.base().isNone()) s.append('%').append(m.base().name());
        if (!m.index().isNone()) s.append(",%").append(m.index().name()).append(',').append(Math.max(1, m.scale()));
        return s.append(')').toString();
    }

    private static String name(Register r) { return r.isNone() ? "" : r.enclosing().name(); }

    /** Whether {@link #scratch} finds its two registers beside addresses {@code after} read. */
    static boolean hasScratch(List<Site> after) {
        int free = 0;
        for (String r : SCRATCH) if (after.stream().noneMatch(a -> a.reads().contains(r))) free++;
        return free >= 2;
    }

    /** The cursor's register and its offset's: the first two scratch registers no address after the cursor load reads. */
    private static String[] scratch(List<Site> after) {
        String[] pair = new String[2];
        int k = 0;
        for (String r : SCRATCH) {
            boolean used = false;
            for (Site a : after) used |= a.reads().contains(r);
            if (!used) pair[k++] = r;
            if (k == 2) return pair;
        }
        throw new IllegalStateException("no scratch registers left"); // 11 candidates, an instruction reads at most 4 registers
    }
}
