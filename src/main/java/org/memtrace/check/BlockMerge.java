package org.memtrace.check;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Pruning rule 2 (Spindle's in-structure accesses): within one straight-line block, the checks of addresses
 * that are one base plus constant offsets ({@code p->a}, {@code p->b}, {@code p->c}) become one check of the
 * span they cover, {@code __memtrace_check_group(base + min, desc)} at the first of them, and the others go.
 * The descriptor (read-only data) lists every access's offset and size: when the span is not all
 * addressable the runtime checks each access exactly, so a span over bytes no access touches (two stack
 * variables and the redzone between, were a base's origin unknown) costs time but reports nothing.
 *
 * <p>A block ends at a jump target, a jump, a return, any call but a check (a call may free the object or
 * move the pointer), inline assembly's #APP and #NO_APP and any directive but {@code .loc} and {@code .cfi_*}. Bases are
 * {@link Linear} values with the same register terms, so one loaded pointer is one base. Stack addresses
 * (terms in %rsp, or %rbp in a function that sets it up as frame pointer) never merge: gcc puts redzones
 * between a frame's variables, so the span between two of them is not all addressable. Nor do spans over
 * 4 KB: both would mostly take the exact path. The check runs at the first access of the group, so an error
 * is reported before the accesses between it and the faulty one have run (with the first one's site).
 */
final class BlockMerge {
    static final long MAX_SPAN = 4096;

    private BlockMerge() {}

    private record Member(int line, Linear address, CheckCall call) {}

    static void apply(List<AsmLine> parsed, Edits edits) {
        boolean framePointer = false;
        Symbolic s = new Symbolic();
        List<Member> block = new ArrayList<>();
        for (int i = 0; i < parsed.size(); i++) {
            AsmLine l = parsed.get(i);
            boolean boundary = switch (l) {
                case AsmLine.Label x -> !x.name().startsWith(".LVL") && !x.name().startsWith(".LBB")
                        && !x.name().startsWith(".LBE") && !x.name().startsWith(".LCFI");
                case AsmLine.Directive d -> !d.name().equals(".loc") && !d.name().startsWith(".cfi");
                case AsmLine.Other o -> false;
                case AsmLine.Instruction in -> in.isJump() || in.mnemonic().startsWith("ret") || CheckCall.otherCall(in);
            };
            if (l instanceof AsmLine.Label x && !x.name().startsWith(".L")) framePointer = false;  // a new function
            if (l instanceof AsmLine.Instruction in && in.mnemonic().startsWith("mov") && in.operands().equals(List.of("%rsp", "%rbp"))) {
                framePointer = true;
            }
            if (boundary) {
                merge(block, framePointer, edits);
                block.clear();
                s = new Symbolic();
                continue;
            }
            if (l instanceof AsmLine.Instruction in) {
                CheckCall c = CheckCall.of(in);
                if (c != null) {
                    if (!edits.touched(i) && c.size() > 0) block.add(new Member(i, s.get("rdi"), c));
                    s.call();
                } else {
                    s.step(in);
                }
            }
        }
        merge(block, framePointer, edits);
    }

    private static void merge(List<Member> block, boolean framePointer, Edits edits) {
        Map<Map<String, Long>, List<Member>> groups = new LinkedHashMap<>();
        for (Member m : block) {
            Map<String, Long> terms = m.address().terms();
            if (terms.isEmpty() || terms.containsKey("rsp") || framePointer && terms.containsKey("rbp")) continue;
            groups.computeIfAbsent(terms, k -> new ArrayList<>()).add(m);
        }
        for (List<Member> g : groups.values()) {
            if (g.size() < 2) continue;
            long min = Long.MAX_VALUE, max = Long.MIN_VALUE;
            for (Member m : g) {
                min = Math.min(min, m.address().constant());
                max = Math.max(max, m.address().constant() + m.call().size());
            }
            if (max - min > MAX_SPAN) continue;
            Member first = g.getFirst();
            String desc = ".Lmtc_g" + edits.ranges;
            List<String> head = new ArrayList<>();
            long shift = min - first.address().constant();
            if (shift != 0) head.add("\tleaq\t" + shift + "(%rdi), %rdi");
            head.add("\tleaq\t" + desc + "(%rip), %rsi");
            head.add("\tcall\t__memtrace_check_group@PLT");
            edits.replace.put(first.line(), head);
            edits.data.add("\t.align 4");
            edits.data.add(desc + ":");
            edits.data.add("\t.long\t" + g.size() + ", " + (max - min));
            for (Member m : g) {
                edits.data.add("\t.long\t" + (m.address().constant() - min) + ", " + (m.call().size() | (m.call().store() ? 256 : 0)));
            }
            for (Member m : g.subList(1, g.size())) {
                edits.replace.put(m.line(), List.of("\t# memtrace check: covered by the block's group check"));
                edits.merged++;
            }
            edits.ranges++;
        }
    }
}
