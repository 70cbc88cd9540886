package org.memtrace.check;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The base pointer of a single indexed access ({@code p[i]}, outside any loop), for the object-level test that
 * the index did not carry the access past both redzones into another live block (docs/check.md, "Overflows
 * into another block"): every byte such an access touches is addressable, so its shadow byte says nothing;
 * only the block its pointer came from does. gcc's check call takes the address in %rdi, computed just before
 * by {@code leaq D(%B,%I,S), %rdi} (B is the pointer when S is over 1; with S = 1, as with {@code addq %X, %R}
 * at -O0, either term may be, and the runtime tries both). Accesses in loops are left out: the loop rule's
 * range check covers the hoisted ones, and the others would pay the test on every iteration.
 */
final class IndexBase {
    /**
     * How a base was found: the lines that put it into %rsi (with %rdi the address); {@code either} when it may
     * be the index and the address minus it the pointer.
     */
    record Base(List<String> setup, boolean either) {
        static Base of(String register, boolean either) {
            return new Base(List.of("\tmovq\t%" + register + ", %rsi"), either);
        }
    }

    private static final Set<String> WRITES_RAX_RDX = Set.of("cltq", "cqto", "cltd", "cwtl", "mulq", "mull",
            "divq", "divl", "idivq", "idivl");

    private static final Pattern JUMP_TARGET = Pattern.compile("\\.L\\d+|[^.].*");

    private IndexBase() {}

    /** Whether each line lies between a label and a later jump back to it (a loop in gcc's layout). */
    static boolean[] inLoops(List<AsmLine> parsed) {
        Map<String, Integer> labels = new HashMap<>();
        for (int i = 0; i < parsed.size(); i++) if (parsed.get(i) instanceof AsmLine.Label l) labels.putIfAbsent(l.name(), i);
        int[] delta = new int[parsed.size() + 1];
        for (int j = 0; j < parsed.size(); j++) {
            if (!(parsed.get(j) instanceof AsmLine.Instruction in) || !in.isJump() || in.operands().size() != 1) continue;
            Integer l = labels.get(in.operands().getFirst());
            if (l != null && l < j) {
                delta[l]++;
                delta[j + 1]--;
            }
        }
        boolean[] out = new boolean[parsed.size()];
        for (int i = 0, depth = 0; i < parsed.size(); i++) out[i] = (depth += delta[i]) > 0;
        return out;
    }

    /**
     * How to get the base of the address gcc's check at {@code call} takes in %rdi, from registers unchanged since
     * where the address was computed to the call, or null when the address is no base plus a register index in
     * the same straight-line code.
     */
    static Base of(List<AsmLine> parsed, int call) {
        String target = "rdi";
        long offset = 0;                                                  // constants added on the way to %rdi
        Set<String> written = new HashSet<>();   // written between the line and the call
        for (int i = call - 1; i >= 0 && call - i <= 16; i--) {
            AsmLine line = parsed.get(i);
            // a jump target ends the straight line; debug labels (.LVL3, .LBB7) do not
            if (line instanceof AsmLine.Label l && JUMP_TARGET.matcher(l.name()).matches()) return null;
            if (line instanceof AsmLine.Directive d && d.name().startsWith("#")) return null;
            if (!(line instanceof AsmLine.Instruction in)) continue;
            if (in.isJump() || in.mnemonic().startsWith("call") || in.mnemonic().startsWith("ret")) return null;
            List<String> ops = in.operands();
            String dest = ops.isEmpty() ? null : in.register(ops.size() - 1);
            if (target.equals(dest)) {
                if (in.mnemonic().equals("movq") && ops.size() == 2 && in.register(0) != null && Registers.wide(ops.get(0))) {
                    written.add(target);
                    target = in.register(0);
                    continue;
                }
                if (in.mnemonic().equals("leaq") && ops.size() == 2 && Registers.wide(ops.get(1))) {
                    String[] bi = baseIndex(ops.get(0));
                    if (bi == null) return null;
                    if (bi[1] == null) {                       // base plus a constant: follow the base
                        Long disp = displacement(ops.get(0));
                        if (disp == null) return null;
                        offset += disp;
                        written.add(target);
                        target = bi[0];
                        continue;
                    }
                    written.add(target);
                    if (bi[0].equals("rsp") || bi[1].equals("rsp")) return null;   // a frame slot: no heap block
                    if (!written.contains(bi[0])) return Base.of(bi[0], bi[2] == null);
                    if (written.contains(bi[1])) return null;
                    // a scale of 1 says nothing of which is the pointer (gcc -O0 puts the index first): either will do
                    if (bi[2] == null) return Base.of(bi[1], true);
                    // the pointer's register was reused: the address less the index and the constants is the pointer
                    Long disp = displacement(ops.get(0));
                    if (disp == null) return null;
                    return new Base(List.of("\tleaq\t" + (disp + offset) + "(,%" + bi[1] + "," + bi[2] + "), %rsi", "\tnegq\t%rsi",
                            "\taddq\t%rdi, %rsi"), false);
                }
                if (in.mnemonic().equals("addq") && ops.size() == 2 && Registers.wide(ops.get(0)) && Registers.wide(ops.get(1))) {
                    String other = in.register(0);
                    written.add(target);
                    return written.contains(other) ? null : Base.of(other, true);
                }
                return null;
            }
            if (dest != null) written.add(dest);
            if (WRITES_RAX_RDX.contains(in.mnemonic())) {
                written.add("rax");
                written.add("rdx");
            }
            if (in.mnemonic().startsWith("xchg") && ops.size() == 2 && in.register(0) != null) written.add(in.register(0));
        }
        return null;
    }

    /** The constant before an operand's parentheses, 0 when none, null when it is a symbol. */
    private static Long displacement(String operand) {
        String d = operand.substring(0, operand.indexOf('(')).strip();
        try {
            return d.isEmpty() ? 0L : Long.decode(d);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** {"rbx", "rax", "4"} for {@code D(%rbx,%rax,4)} (scale null when 1), {"rbx", null, null} for {@code D(%rbx)}. */
    private static String[] baseIndex(String operand) {
        int open = operand.indexOf('(');
        if (open < 0 || !operand.endsWith(")") || operand.contains("%rip")) return null;
        String[] parts = operand.substring(open + 1, operand.length() - 1).split(",");
        String base = parts[0].isBlank() ? null : Registers.full(parts[0].strip());
        if (base == null || !Registers.wide(parts[0].strip())) return null;
        if (parts.length == 1) return new String[] {base, null, null};
        String index = Registers.full(parts[1].strip());
        String scale = parts.length > 2 && !parts[2].strip().equals("1") ? parts[2].strip() : null;
        return index == null || !Registers.wide(parts[1].strip()) ? null : new String[] {base, index, scale};
    }
}
