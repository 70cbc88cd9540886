package org.memtrace.check;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Pruning rule 3 (Spindle's provably safe accesses): a check whose address is, on every path to it, a global
 * defined in this file plus an offset whose range lies inside the global ({@code table[h & (SLOTS - 1)]},
 * {@code lut[c]} with {@code c} an unsigned char, {@code a[i]} under {@code if (i < N)}) is deleted. gcc's own
 * instrumentation leaves these in: it drops only constant in-bounds offsets.
 *
 * <p>A forward data-flow over each function's assembly ({@link Bounds}) gives every general register an
 * interval, or "the address of global G plus an interval", at every line: masks ({@code and $M}), zero
 * extensions ({@code movzbl}, any 32-bit write), constant shifts, additions, {@code lea}, copies, and the
 * unsigned compare before a conditional jump ({@code cmp $C, %r; ja}) refine them; a label's state is the
 * union of the states of the jumps to it and of the line before; a label that anything but a direct jump
 * names (a switch's jump table) or a function's start knows nothing; a call forgets the caller-saved
 * registers. Loops reach a fixed point by widening: a label whose state keeps changing forgets the
 * registers that changed. The global's extent is its {@code .size} in this file (not for {@code .weak} ones,
 * which another definition may replace), gcc's redzone after it not included, so a proven access is in the
 * object, never in a redzone. A check removed here is counted with the block rule's ({@code merged} in the
 * site table): the runtime's summary has no word of its own for it.
 */
final class InBounds {
    private static final Pattern JUMP_TARGET = Pattern.compile("\\.L\\d+");
    private static final Pattern SIZE = Pattern.compile("^([.$\\w]+)\\s*,\\s*(\\d+)$");
    private static final int WIDEN_AFTER = 3;

    private InBounds() {}

    /** Deletes the provable checks not already touched; returns how many. */
    static int apply(List<AsmLine> parsed, Edits edits) {
        Map<String, Long> sizes = sizes(parsed);
        if (sizes.isEmpty()) return 0;
        Set<String> tableLabels = labelsNamedOutsideJumps(parsed);
        Map<String, Bounds> atLabel = new HashMap<>();
        Map<String, Integer> changes = new HashMap<>();
        Set<Integer> provable = new HashSet<>();
        boolean converged = false;
        for (int pass = 0; pass < 40 && !converged; pass++) {
            boolean changed = false;
            provable.clear();
            Bounds cur = null;                       // null: unreachable (after a jmp or ret)
            for (int i = 0; i < parsed.size(); i++) {
                AsmLine l = parsed.get(i);
                if (l instanceof AsmLine.Label x) {
                    if (!x.name().startsWith(".L")) {
                        cur = new Bounds();          // a function (or a global's) start: nothing known
                    } else if (JUMP_TARGET.matcher(x.name()).matches()) {
                        Bounds in = tableLabels.contains(x.name()) ? new Bounds() : Bounds.join(cur, atLabel.get(x.name()));
                        cur = in == null ? null : in.copy();
                    }
                    continue;
                }
                if (!(l instanceof AsmLine.Instruction in) || cur == null) {
                    if (l instanceof AsmLine.Directive d && (d.name().equals("#APP") || d.name().equals("#NO_APP")) && cur != null) {
                        cur = new Bounds();          // inline assembly writes what it likes
                    }
                    continue;
                }
                String m = in.mnemonic();
                CheckCall c = CheckCall.of(in);
                if (c != null && provable(cur, c, sizes)) provable.add(i);
                if (m.startsWith("j")) {
                    if (in.operands().size() == 1 && JUMP_TARGET.matcher(in.operands().getFirst()).matches()) {
                        String target = in.operands().getFirst();
                        Bounds taken = cur.copy(), fall = cur.copy();
                        refine(parsed, i, m, taken, fall);
                        Bounds old = atLabel.get(target);
                        Bounds joined = Bounds.join(old, taken);
                        if (old != null && !joined.equals(old) && changes.merge(target, 1, Integer::sum) > WIDEN_AFTER) {
                            joined = old.widen(joined);
                        }
                        if (!joined.equals(old)) {
                            atLabel.put(target, joined);
                            changed = true;
                        }
                        cur = m.equals("jmp") ? null : fall;
                    } else if (m.equals("jmp")) {
                        cur = null;                  // an indirect jump: its targets are table labels
                    }
                    continue;
                }
                if (m.startsWith("ret") || m.equals("ud2") || m.startsWith("hlt")) {
                    cur = null;
                    continue;
                }
                cur.step(in);
            }
            converged = !changed;
        }
        if (!converged) return 0;                    // no fixed point: nothing is proven
        int removed = 0;
        for (int i : provable) {
            if (edits.touched(i)) continue;
            edits.replace.put(i, List.of("\t# memtrace check: proven in bounds"));
            removed++;
        }
        return removed;
    }

    private static boolean provable(Bounds b, CheckCall c, Map<String, Long> sizes) {
        Bounds.Value a = b.get("rdi");
        if (a == null || a.symbol() == null || !sizes.containsKey(a.symbol()) || a.lo() < 0) return false;
        long hiEnd;
        if (c.size() > 0) {
            hiEnd = a.hi() + c.size();
        } else {
            Bounds.Value n = b.get("rsi");
            if (n == null || n.symbol() != null || n.lo() < 0) return false;
            hiEnd = a.hi() + n.hi();
        }
        return hiEnd <= sizes.get(a.symbol());
    }

    /**
     * The compare just before a conditional jump, {@code cmp $C, %r} (r - C), narrows r on each edge: an
     * unsigned compare for any value, a signed one only for a value known not negative.
     */
    private static void refine(List<AsmLine> parsed, int jump, String m, Bounds taken, Bounds fall) {
        int k = jump - 1;
        while (k >= 0 && !(parsed.get(k) instanceof AsmLine.Instruction)) {
            if (parsed.get(k) instanceof AsmLine.Label) return;
            k--;
        }
        if (k < 0 || !(parsed.get(k) instanceof AsmLine.Instruction cmp) || !cmp.mnemonic().startsWith("cmp")
                || cmp.operands().size() != 2 || !cmp.operands().getFirst().startsWith("$")) {
            return;
        }
        String op = cmp.operands().get(1);
        String r = Registers.full(op);
        if (r == null) return;
        long c;
        try {
            c = Long.parseLong(cmp.operands().getFirst().substring(1));
        } catch (NumberFormatException e) {
            return;
        }
        boolean wide = Registers.wide(op);
        if (!wide && !Registers.dword(op)) return;
        Bounds.Value v = taken.get(r);
        boolean narrowKnown = v != null && v.symbol() == null && v.lo() >= 0 && v.hi() <= 0xffffffffL;
        if (!wide && !narrowKnown) return;           // a 32-bit compare says nothing of a wide register
        if (!wide) c &= 0xffffffffL;
        if (c < 0) return;
        boolean signed = m.equals("jg") || m.equals("jle") || m.equals("jl") || m.equals("jge");
        if (signed && (v == null || v.symbol() != null || v.lo() < 0)) return;
        switch (m) {
            case "ja", "jg" -> fall.narrow(r, 0, c);          // r <= C falls through
            case "jae", "jnb", "jge" -> { if (c > 0) fall.narrow(r, 0, c - 1); }
            case "jbe", "jle" -> taken.narrow(r, 0, c);
            case "jb", "jnae", "jl" -> { if (c > 0) taken.narrow(r, 0, c - 1); }
            default -> { }
        }
    }

    /** Global objects defined in the file with their sizes (not weak ones). */
    private static Map<String, Long> sizes(List<AsmLine> parsed) {
        Map<String, Long> sizes = new HashMap<>();
        Set<String> weak = new HashSet<>(), objects = new HashSet<>();
        for (AsmLine l : parsed) {
            if (!(l instanceof AsmLine.Directive d)) continue;
            switch (d.name()) {
                case ".weak" -> weak.add(d.arguments().strip());
                case ".type" -> {
                    String[] p = d.arguments().split(",");
                    if (p.length == 2 && p[1].strip().equals("@object")) objects.add(p[0].strip());
                }
                case ".size" -> {
                    Matcher m = SIZE.matcher(d.arguments().strip());
                    if (m.matches()) sizes.put(m.group(1), Long.parseLong(m.group(2)));
                }
                default -> { }
            }
        }
        sizes.keySet().retainAll(objects);
        sizes.keySet().removeAll(weak);
        return sizes;
    }

    /** Jump-target labels that a line other than a direct jump names (jump tables, address arithmetic). */
    private static Set<String> labelsNamedOutsideJumps(List<AsmLine> parsed) {
        Set<String> out = new HashSet<>();
        for (AsmLine l : parsed) {
            String text = switch (l) {
                case AsmLine.Instruction in when in.isJump() && in.operands().size() == 1
                        && JUMP_TARGET.matcher(in.operands().getFirst()).matches() -> "";
                case AsmLine.Instruction in -> String.join(",", in.operands());
                case AsmLine.Directive d -> d.arguments();
                default -> "";
            };
            Matcher m = Pattern.compile("\\.L\\d+\\b").matcher(text);
            while (m.find()) out.add(m.group());
        }
        return out;
    }
}
