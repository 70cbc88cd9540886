package org.memtrace.rewrite;

import org.memtrace.format.SiteFormat;

import java.util.ArrayList;
import java.util.List;
import org.memtrace.x86.Flow;
import org.memtrace.x86.Instruction;
import org.memtrace.x86.MemoryAccess;
import org.memtrace.x86.MemoryOperand;
import org.memtrace.x86.Register;

/**
 * The assembly text of a module's trampolines and its site table (docs/rewriting.md, "Trampolines"). Each
 * trampoline is the group probe of docs/compiled-in.md in its GOT form (so the runtime's full-buffer and
 * signal handling recognize it byte for byte), then the instruction's own bytes and a jump back. Addresses
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
    static long bound(Decision.Patch p) { return 40 + 112L * p.parts().size() + 40L * p.sites(); }

    static final int KIND_LOAD = SiteFormat.LOAD, KIND_STORE = SiteFormat.STORE, KIND_MODIFY = SiteFormat.MODIFY;
    static final int FLAG_IMPLICIT_STACK = SiteFormat.FLAG_IMPLICIT_STACK;

    private TrampolineWriter() {}

    /** The assembly of {@code patches}' trampolines, the N-th labelled {@code mt_tN}. */
    static String assembly(List<Decision.Patch> patches) {
        var text = new StringBuilder("\t.text\ncursor_slot:\n\t.quad 0\n");
        var sites = new StringBuilder("\t.section memtrace_sites,\"a\",@progbits\n\t.balign 8\n");
        int site = 0;
        for (int n = 0; n < patches.size(); n++) {
            Decision.Patch p = patches.get(n);
            text.append("mt_t").append(n).append(":\n");
            for (Decision.Part part : p.parts()) {
                List<String> labels = new ArrayList<>();
                for (int i = 0; i < part.accesses().size(); i++) labels.add("mt_s" + site++);
                if (!labels.isEmpty()) probe(text, part, labels);
                switch (part.move()) {
                    case CALL -> call(text, part);
                    case BRANCH -> text.append('\t').append(part.instruction().mnemonic()).append(" mt_base+")
                            .append(part.instruction().branchTarget().orElseThrow()).append('\n');
                    case COPY -> body(text, part);
                }
                for (int i = 0; i < part.accesses().size(); i++) entry(sites, labels.get(i), part, i);
            }
            // after a call, a return or a jump nothing falls through; after a conditional jump, the run's end
            Instruction last = p.parts().getLast().instruction();
            if (last.flow() == Flow.SEQUENTIAL || last.flow() == Flow.CONDITIONAL_JUMP)
                text.append("\tjmp mt_base+").append(p.end()).append('\n');
        }
        return text.append(sites).toString();
    }

    /** The group probe of one instruction's accesses: the last one's slot is stored first (the guard page). */
    private static void probe(StringBuilder s, Decision.Part p, List<String> labels) {
        List<MemoryAccess> a = p.accesses();
        int n = a.size();
        String[] pair = scratch(a.subList(0, n - 1));
        String c = pair[0], t = pair[1];
        s.append("\tlea -128(%rsp),%rsp\n\tpush %rax\n\tpush %").append(c).append("\n\tpush %").append(t).append('\n');
        s.append(labels.get(n - 1)).append(":\n\tlea ").append(address(a.get(n - 1).operand())).append(",%rax\n");
        s.append("\tmov cursor_slot(%rip),%").append(t).append("\n\tmov %fs:(%").append(t).append("),%").append(c).append('\n');
        store(s, labels.get(n - 1), c, n - 1);
        for (int i = 0; i < n - 1; i++) {
            if (reads(a.get(i).operand(), "rax")) s.append("\tmov 16(%rsp),%rax\n");
            s.append(labels.get(i)).append(":\n\tlea ").append(address(a.get(i).operand())).append(",%rax\n");
            store(s, labels.get(i), c, i);
        }
        s.append("\tlea ").append(16 * n).append("(%").append(c).append("),%").append(c).append('\n');
        s.append("\tmov %").append(c).append(",%fs:(%").append(t).append(")\n");
        s.append("\tpop %").append(t).append("\n\tpop %").append(c).append("\n\tpop %rax\n\tlea 128(%rsp),%rsp\n");
    }

    private static void store(StringBuilder s, String label, String c, int slot) {
        s.append("\tmov %rax,").append(slot == 0 ? "" : 16 * slot).append("(%").append(c).append(")\n");
        s.append("\tlea ").append(label).append("(%rip),%rax\n");
        s.append("\tmov %rax,").append(16 * slot + 8).append("(%").append(c).append(")\n");
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
     * A {@code call rel32}, emulated: the original return address pushed (through %rax, saved and restored
     * below it; lea and mov leave the flags alone), then a jump to the callee, which returns to the module.
     */
    private static void call(StringBuilder s, Decision.Part p) {
        s.append("\tlea -8(%rsp),%rsp\n\tpush %rax\n\tlea mt_base+").append(p.instruction().nextAddress())
                .append("(%rip),%rax\n\tmov %rax,8(%rsp)\n\tpop %rax\n\tjmp mt_base+")
                .append(p.instruction().branchTarget().orElseThrow()).append('\n');
    }

    private static void bytes(StringBuilder s, byte[] b, int from, int to) {
        if (from >= to) return;
        s.append("\t.byte ");
        for (int i = from; i < to; i++) s.append(i > from ? "," : "").append(b[i] & 0xff);
        s.append('\n');
    }

    /** One 24-byte site table entry (docs/compiled-in.md, "The site table"), full mode: weights 1, no block. */
    private static void entry(StringBuilder s, String label, Decision.Part p, int i) {
        MemoryAccess a = p.accesses().get(i);
        int kind = a.read() && a.write() ? KIND_MODIFY : a.write() ? KIND_STORE : KIND_LOAD;
        s.append("\t.long ").append(label).append(" - .\n\t.long mt_base+").append(p.instruction().address()).append(" - .\n");
        s.append("\t.byte ").append(kind).append(',').append(a.sizeBytes()).append(',').append(i).append(',')
                .append(a.implicitStack() ? FLAG_IMPLICIT_STACK : 0).append("\n\t.short 1,1,0,0,0,0\n");
    }

    /** The operand's address as a {@code lea} source inside the probe (%rsp-based ones step over what it pushed). */
    static String address(MemoryOperand m) {
        long disp = m.displacement();
        if (m.isRipRelative()) return "mt_base+" + m.staticAddress().orElseThrow() + "(%rip)";
        if (m.base().isStackPointer()) disp += STACK_STEP;
        if (m.base().isNone() && m.index().isNone()) return Long.toString(disp);
        var s = new StringBuilder();
        if (disp != 0) s.append(disp);
        s.append('(');
        if (!m.base().isNone()) s.append('%').append(m.base().name());
        if (!m.index().isNone()) s.append(",%").append(m.index().name()).append(',').append(Math.max(1, m.scale()));
        return s.append(')').toString();
    }

    private static boolean reads(MemoryOperand m, String register) {
        return name(m.base()).equals(register) || name(m.index()).equals(register);
    }

    private static String name(Register r) { return r.isNone() ? "" : r.enclosing().name(); }

    /** The cursor's register and its offset's: the first two scratch registers no address after the cursor load reads. */
    private static String[] scratch(List<MemoryAccess> after) {
        String[] pair = new String[2];
        int k = 0;
        for (String r : SCRATCH) {
            boolean used = false;
            for (MemoryAccess a : after) used |= reads(a.operand(), r);
            if (!used) pair[k++] = r;
            if (k == 2) return pair;
        }
        throw new IllegalStateException("no scratch registers left"); // 11 candidates, an instruction reads at most 4 registers
    }
}
