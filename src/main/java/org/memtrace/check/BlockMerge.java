package org.memtrace.check;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Pruning rule 2 (Spindle's in-structure accesses): within one straight-line block, the checks of addresses
 * that are one base plus constant offsets ({@code p->a}, {@code p->b}, {@code p->c}) become one check of the
 * span they cover, at the first of them, and the others go: an inline test of the span's shadow (spans of at most
 * {@link #INLINE_SPAN} bytes: a base's accesses further apart make several groups), calling
 * {@code __memtrace_slow_group(base + min, desc)} only when that shadow is not all 0.
 * The descriptor (read-only data) lists every access's offset and size: when the span is not all
 * addressable the runtime checks each access exactly, so a span over bytes no access touches (two stack
 * variables and the redzone between, were a base's origin unknown) costs time but reports nothing.
 *
 * <p>A block ends at a jump target, a jump, a return, any call but a check (a call may free the object or
 * move the pointer), gcc's writes to the shadow (a variable's scope starts or ends), inline assembly's #APP and
 * #NO_APP and any directive but {@code .loc} and {@code .cfi_*}. Bases are
 * {@link Linear} values with the same register terms, so one loaded pointer is one base. Stack addresses
 * (terms in %rsp, or %rbp in a function that sets it up as frame pointer) never merge: gcc puts redzones
 * between a frame's variables, so the span between two of them is not all addressable: it would mostly take
 * the exact path. The check runs at the first access of the group, so an error
 * is reported before the accesses between it and the faulty one have run (with the first one's site).
 */
final class BlockMerge {

    /**
     * The widest span tested inline: its shadow, bytes {@code lo >> 3 .. (hi - 1) >> 3}, is at most 8 bytes
     * whatever the alignment of {@code lo} ({@code (7 + 57 - 1) >> 3 = 7}), so one 8-byte load holds it.
     */
    static final long INLINE_SPAN = 57;

    private BlockMerge() {}

    /**
     * The inline test of a span's shadow at %rdi, as ASan's of one access: the 8 shadow bytes from the span's
     * first, shifted left past those beyond its last (little-endian: the later bytes are the high ones), all 0:
     * no call. Otherwise the runtime tests the span, then each access exactly (a granule only partly
     * addressable may still hold every access). %rax, %rcx and the flags are free: gcc planned a call here.
     */
    private static List<String> inlineTest(long span, String done) {
        return List.of(
                "\tmovq\t%rdi, %rax",
                "\tshrq\t$3, %rax",
                "\tleaq\t" + (span - 1) + "(%rdi), %rcx",
                "\tshrq\t$3, %rcx",
                "\tsubq\t%rax, %rcx",
                "\tmovq\t2147450880(%rax), %rax",
                "\txorl\t$7, %ecx",
                "\tshll\t$3, %ecx",
                "\tshlq\t%cl, %rax",
                "\ttestq\t%rax, %rax",   // a shift by 0 leaves the flags as they were
                "\tje\t" + done);
    }

    private record Member(int line, Linear address, CheckCall call) {}

    /**
     * Whether gcc's own code writes the shadow here (the checks are calls, so in gcc's output only its frame
     * set-up and scope poisoning name the shadow's offset: {@code movw $0, 2147450880(%rax)}, or at -O0
     * {@code addq $2147450880, %rax} before {@code movw $0, (%rax)}). A variable's scope starting there makes
     * its bytes addressable from then on: a group check before it, over the accesses after it, would find them
     * still poisoned ({@code stack use after scope} on correct code, two structs declared in a loop body and
     * addressed from ASan's frame base %rbx, which is no %rsp or %rbp base).
     */
    private static boolean touchesShadow(AsmLine.Instruction in) {
        for (String o : in.operands()) if (o.contains("2147450880")) return true;
        return false;
    }

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
                case AsmLine.Instruction in -> in.isJump() || in.mnemonic().startsWith("ret") || CheckCall.otherCall(in)
                        || touchesShadow(in);
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
            for (List<Member> c : clusters(g)) group(c, edits);
        }
    }

    /**
     * A base's accesses cut into spans of at most {@link #INLINE_SPAN} bytes, greedily by offset, each kept in
     * program order: a wider span's shadow is no single load (a struct's fields 1 KB apart were tested byte by
     * byte of their span's shadow, bzip2's state per input byte: 3.4 % of its checked run), and an access alone
     * in its span keeps its own inline check.
     */
    private static List<List<Member>> clusters(List<Member> g) {
        List<Member> byOffset = new ArrayList<>(g);
        byOffset.sort(Comparator.comparingLong(m -> m.address().constant()));
        List<List<Member>> out = new ArrayList<>();
        List<Member> cur = new ArrayList<>();
        long lo = 0;
        for (Member m : byOffset) {
            long end = m.address().constant() + m.call().size();
            if (cur.isEmpty() || end - lo > INLINE_SPAN) {
                if (cur.size() >= 2) out.add(cur);
                cur = new ArrayList<>();
                lo = m.address().constant();
            }
            cur.add(m);
        }
        if (cur.size() >= 2) out.add(cur);
        for (List<Member> c : out) c.sort(Comparator.comparingInt(Member::line));
        return out;
    }

    private static void group(List<Member> g, Edits edits) {
        long min = Long.MAX_VALUE, max = Long.MIN_VALUE;
        for (Member m : g) {
            min = Math.min(min, m.address().constant());
            max = Math.max(max, m.address().constant() + m.call().size());
        }
        Member first = g.getFirst();
        String desc = ".Lmtc_g" + edits.ranges;
        List<String> head = new ArrayList<>();
        long shift = min - first.address().constant();
        if (shift != 0) head.add("\tleaq\t" + shift + "(%rdi), %rdi");
        // counted here, not by the runtime: one group check, its accesses (check_shadow.c sums them)
        head.add("\tmovq\t__memtrace_check_grouped@gottpoff(%rip), %rcx");
        head.add("\tincq\t%fs:(%rcx)");
        head.add("\taddq\t$" + g.size() + ", %fs:8(%rcx)");
        String done = ".Lmtc_gd" + edits.ranges;
        head.addAll(inlineTest(max - min, done));
        head.add("\tleaq\t" + desc + "(%rip), %rsi");
        head.add("\tcall\t__memtrace_slow_group@PLT");
        head.add(done + ":");
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
