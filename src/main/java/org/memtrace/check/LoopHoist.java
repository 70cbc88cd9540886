package org.memtrace.check;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Pruning rule 1 (Spindle's in-loop accesses): a loop of one basic block whose every check reads an
 * address affine in its induction registers gets one range check at its entry, and its per-iteration checks go.
 *
 * <p>The loop: a label {@code .LN} that only its own back edge jumps to, entered by falling into it, whose
 * body up to {@code cmpq A, B ; jCC .LN} has no other label, jump or call but gcc's checks. Symbolic
 * execution of the body ({@link Symbolic}) from the top of an iteration gives, at the end, each register as
 * itself (invariant), itself plus a constant (an induction register with that step) or anything else
 * (variant). A check whose address is {@code F = sum k_r r + d} over invariant and induction registers only
 * moves by {@code step = sum k_r c_r} per iteration; {@code D = B - A} at the compare moves by {@code dstep}.
 * The loop's last iteration is then {@code jl = -(D0 + e) / dstep} (D0 is D in the first iteration; e is 0 for
 * jne, jb, jl, ja, jg and -dstep for jbe, jle, jae, jge, the latter four only with dstep = +-1, jne whenever
 * dstep divides step) and the last address {@code F0 + jl * step = F0 - (D0 + e) * (step / dstep)}: both are
 * linear in the registers at the loop's entry, so the check at entry computes them without a division and calls
 * {@code __memtrace_check_loop(first, last, size | store << 8 | |step| << 16)}, which checks
 * {@code [min, max + size)}. This reads Spindle's "(pos_init - 1) * struct_size < new_size" as: the whole
 * range the loop will touch, from the values its induction variables have at entry and its exit condition.
 *
 * <p>A body with forward branches inside it ({@code if} in the loop, {@link LoopShape}) qualifies too: the
 * checks before its first branch and after its last join run every iteration and are hoisted alike; the part
 * between runs in some iterations only, so its checks stay, and every register it writes is opaque after it
 * (neither invariant nor induction).
 *
 * <p>Strides over {@link #MAX_STEP} bytes keep their per-access checks (the cost rule).
 *
 * <p>Assumes what a terminating loop guarantees: D reaches the exit value exactly, no register wraps around.
 */
final class LoopHoist {
    private static final Pattern JUMP_LABEL = Pattern.compile("\\.L\\d+");
    static final Set<String> CONTINUE_WHILE_NONZERO = Set.of("jne", "jnz");
    static final Set<String> LESS = Set.of("jb", "jl", "jnae", "jnge");
    static final Set<String> GREATER = Set.of("ja", "jg", "jnbe", "jnle");
    static final Set<String> LESS_EQUAL = Set.of("jbe", "jle", "jna", "jng");
    static final Set<String> GREATER_EQUAL = Set.of("jae", "jge", "jnb", "jnl");
    private static final List<String> SAVED = List.of("rax", "rdx", "rsi", "rdi"); // slots 0, 8, 16, 24
    private static final int SAVED_BYTES = 128 + 8 + 8 * 4;                       // red zone, flags, four
    /**
     * The cost rule: the entry check reads one shadow word per 64 bytes of the range, a per-access check is a
     * call (some 20 cycles) per iteration; past this stride (matmul's column walk, 2 KB) the range costs more
     * than the calls it saves (measured: matmul 256 went from 8.5x to 25x native when its column was hoisted).
     */
    static final long MAX_STEP = 512;

    private LoopHoist() {}

    static void apply(List<String> lines, List<AsmLine> parsed, Map<String, Integer> references, Edits edits) {
        Map<String, Integer> definedAt = new HashMap<>();
        for (int i = 0; i < parsed.size(); i++) {
            if (parsed.get(i) instanceof AsmLine.Label l && JUMP_LABEL.matcher(l.name()).matches()) definedAt.put(l.name(), i);
        }
        for (var e : definedAt.entrySet()) {
            if (references.getOrDefault(e.getKey(), 0) != 1) continue;
            LoopShape shape = LoopShape.of(e.getKey(), e.getValue(), parsed, definedAt, references);
            if (shape != null) loop(e.getKey(), e.getValue(), parsed, edits, shape);
        }
    }

    private static void loop(String label, int top, List<AsmLine> parsed, Edits edits, LoopShape shape) {
        if (!fallsInto(parsed, top)) return;
        Symbolic s = new Symbolic(narrowAtEntry(parsed, top));
        List<Integer> checkLines = new ArrayList<>();
        List<Linear> forms = new ArrayList<>();
        List<CheckCall> calls = new ArrayList<>();
        Linear a = null, b = null;
        boolean narrowCompare = false;
        String jump = null;
        int i = top + 1;
        for (; i < parsed.size(); i++) {
            AsmLine l = parsed.get(i);
            if (shape.conditional(i)) {
                // under an if of the body: runs in some iterations only; what it writes is opaque after it
                if (l instanceof AsmLine.Instruction in) {
                    Map<String, Linear> before = s.snapshot();
                    if (CheckCall.of(in) != null) s.call();
                    else s.step(in);
                    s.forgetChanged(before);
                }
                a = b = null;
                continue;
            }
            switch (l) {
                case AsmLine.Label x -> {
                    if (!x.name().startsWith(".LVL") && !x.name().startsWith(".LBB") && !x.name().startsWith(".LBE")
                            && !shape.internal(x.name())) return;
                }
                case AsmLine.Directive d -> {
                    if (!d.name().equals(".loc") && !d.name().startsWith(".cfi")) return;
                }
                case AsmLine.Other o -> { }
                case AsmLine.Instruction in -> {
                    CheckCall c = CheckCall.of(in);
                    if (c != null) {
                        if (c.size() > 0 && !edits.touched(i)) {
                            checkLines.add(i);
                            forms.add(s.get("rdi"));
                            calls.add(c);
                        }
                        s.call();
                    } else if (in.isJump()) {
                        if (in.operands().size() != 1 || !in.operands().getFirst().equals(label)) return;
                        jump = in.mnemonic();
                    } else if (in.mnemonic().startsWith("call") || in.mnemonic().startsWith("ret")) {
                        return;
                    } else if ((in.mnemonic().equals("cmpq") || in.mnemonic().equals("cmp")) && in.operands().size() == 2
                            && Registers.wide(in.operands().get(1))) {
                        a = operand(s, in.operands().get(0));
                        b = operand(s, in.operands().get(1));
                        narrowCompare = false;
                        s.step(in);
                    } else if (in.mnemonic().equals("cmpl") && in.operands().size() == 2) {
                        a = narrowOperand(s, in.operands().get(0));   // 32-bit: exact for jne when both are
                        b = narrowOperand(s, in.operands().get(1));   // zero-extended, which narrowOperand asks
                        narrowCompare = true;
                        s.step(in);
                    } else {
                        a = b = null;             // the compare must be the last flag-setter before the jump
                        s.step(in);
                    }
                }
            }
            if (jump != null) break;
        }
        if (jump == null || a == null || b == null || checkLines.isEmpty()) return;
        if (narrowCompare && !CONTINUE_WHILE_NONZERO.contains(jump)) return;
        Map<String, Long> steps = new HashMap<>();   // invariant (0) and induction registers
        for (String r : Registers.ALL) {
            Linear end = s.get(r);
            if (end.terms().equals(Map.of(r, 1L))) steps.put(r, end.constant());
        }
        Linear d = b.minus(a);
        Long dstep = step(d, steps);
        if (dstep == null || dstep == 0) return;
        long e;
        if (CONTINUE_WHILE_NONZERO.contains(jump)) e = 0;
        else if (LESS.contains(jump) && dstep == 1 || GREATER.contains(jump) && dstep == -1) e = 0;
        else if (LESS_EQUAL.contains(jump) && dstep == 1 || GREATER_EQUAL.contains(jump) && dstep == -1) e = -dstep;
        else return;
        List<String> entry = new ArrayList<>();
        for (int k = 0; k < checkLines.size(); k++) {
            Linear f = forms.get(k);
            Long step = step(f, steps);
            if (step == null || step % dstep != 0 || Math.abs(step) > MAX_STEP) continue;
            Linear last = f.minus(d.plus(e).times(step / dstep));
            List<String> code = entryCheck(f, last, calls.get(k), Math.abs(step), parsed, checkLines.get(k));
            if (code == null) continue;
            entry.addAll(code);
            edits.replace.put(checkLines.get(k), List.of("\t# memtrace check: checked once at the loop's entry"));
            edits.hoisted++;
            edits.loops++;
        }
        if (!entry.isEmpty()) edits.insertBefore(top, entry);
    }

    static Linear operand(Symbolic s, String op) {
        if (op.startsWith("$")) {
            try {
                return Linear.constant(Long.parseLong(op.substring(1)));
            } catch (NumberFormatException e) {
                return null;
            }
        }
        return Registers.wide(op) ? s.get(Registers.full(op)) : null;
    }

    static Linear narrowOperand(Symbolic s, String op) {
        if (op.startsWith("$")) {
            Linear c = operand(s, op);
            return c != null && c.constant() >= 0 ? c : null;
        }
        String r = Registers.full(op);
        return Registers.dword(op) && s.narrow(r) ? s.get(r) : null;
    }

    /**
     * Registers whose upper half is zero when the loop is entered: the last write to them on the straight
     * path into the loop was a 32-bit one (the path goes back through branches out, and a call only ends
     * what is known of caller-saved registers). Nothing is known past a label.
     */
    static Set<String> narrowAtEntry(List<AsmLine> parsed, int top) {
        Set<String> narrow = new HashSet<>(), decided = new HashSet<>();
        for (int i = top - 1; i >= 0; i--) {
            AsmLine l = parsed.get(i);
            if (l instanceof AsmLine.Label x && JUMP_LABEL.matcher(x.name()).matches()) break;
            if (l instanceof AsmLine.Label x && !x.name().startsWith(".L")) break;
            if (!(l instanceof AsmLine.Instruction in)) continue;
            if (in.mnemonic().startsWith("jmp") || in.mnemonic().startsWith("ret")) break;
            if (in.isJump()) continue;                        // a branch out: the path into the loop goes on
            if (in.mnemonic().startsWith("call")) {
                decided.addAll(Registers.CALLER_SAVED);
                continue;
            }
            if (!in.operands().isEmpty() && !in.mnemonic().startsWith("cmp") && !in.mnemonic().startsWith("test")) {
                String dst = Registers.full(in.operands().getLast());
                if (dst != null && decided.add(dst) && Registers.dword(in.operands().getLast())
                        && !in.mnemonic().startsWith("xchg")) narrow.add(dst);
            }
            if (in.operands().size() <= 1 || in.mnemonic().contains(" ")) {
                decided.addAll(List.of("rax", "rdx", "rcx", "rsi", "rdi")); // implicit writes (cltq, mul, string ops)
            }
        }
        return narrow;
    }

    /** How much a value moves per iteration, or null when it reads a variant or opaque register. */
    static Long step(Linear v, Map<String, Long> steps) {
        long total = 0;
        for (var t : v.terms().entrySet()) {
            Long c = steps.get(t.getKey());
            if (c == null) return null;
            total += t.getValue() * c;
        }
        return total;
    }

    /** Whether the line before the loop's label (past alignment and debug lines) lets control fall into it. */
    static boolean fallsInto(List<AsmLine> parsed, int top) {
        for (int i = top - 1; i >= 0; i--) {
            switch (parsed.get(i)) {
                case AsmLine.Instruction in -> {
                    String m = in.mnemonic();
                    return !m.startsWith("jmp") && !m.startsWith("ret") && !m.equals("ud2") && !m.startsWith("call");
                }
                case AsmLine.Directive d -> {
                    if (!d.name().equals(".p2align") && !d.name().equals(".align") && !d.name().equals(".loc")
                            && !d.name().startsWith(".cfi")) return false;
                }
                case AsmLine.Label l -> {
                    if (!l.name().startsWith(".LVL") && !l.name().startsWith(".LBB") && !l.name().startsWith(".LBE")) return false;
                }
                case AsmLine.Other o -> { }
            }
        }
        return false;
    }

    /** The code before the loop: every register and the flags kept; null when a coefficient is too large. */
    private static List<String> entryCheck(Linear first, Linear last, CheckCall call, long step, List<AsmLine> parsed,
                                           int checkLine) {
        return entryCheck(first, last, call.size(), call.store(), step, parsed, checkLine);
    }

    static List<String> entryCheck(Linear first, Linear last, int size, boolean store, long step, List<AsmLine> parsed,
                                   int checkLine) {
        return entryCheck(first, last, null, 0, 0, size, store, step, null, parsed, checkLine);
    }

    /**
     * The same with a last address of {@code last + (count >> shift) * mult} when {@code count} is not null:
     * a loop whose exit counter moves by 2^shift bytes per iteration (matmul's column pointer, 2 KB) while
     * the access moves by less (its row pointer, 8 bytes) has {@code count >> shift} iterations left, exactly
     * (a loop that ends on {@code jne} reaches its exit value), which no multiplication gives.
     */
    static List<String> entryCheck(Linear first, Linear last, Linear count, int shift, long mult, int size,
                                   boolean store, long step, List<AsmLine> parsed, int checkLine) {
        return entryCheck(first, last, count, shift, mult, size, store, step, null, parsed, checkLine);
    }

    /**
     * The same, each access covering {@code width} bytes (in {@code %rcx}, saved below the flags; bit 10 of the
     * packed word says so) when width is not null: the rows of a column walk moved out of its loop.
     */
    static List<String> entryCheck(Linear first, Linear last, Linear count, int shift, long mult, int size,
                                   boolean store, long step, Linear width, List<AsmLine> parsed, int checkLine) {
        List<String> code = new ArrayList<>(List.of("\tleaq\t-128(%rsp), %rsp"));
        int below = 0;
        if (width != null) {
            code.add("\tpushq\t%rcx");
            below = 8;
        }
        code.addAll(List.of("\tpushfq", "\tpushq\t%rdi", "\tpushq\t%rsi", "\tpushq\t%rdx", "\tpushq\t%rax"));
        if (count != null) {
            if (mult != (int) mult || shift < 0 || shift > 62 || !evaluate(count, code, below)) return null;
            code.add("\tsarq\t$" + shift + ", %rax");
            code.add("\timulq\t$" + mult + ", %rax, %rax");
            code.add("\tmovq\t%rax, %rsi");                     // the saved %rsi is what evaluate reads
            if (!evaluate(last, code, below)) return null;
            code.add("\taddq\t%rax, %rsi");
        } else {
            if (!evaluate(last, code, below)) return null;
            code.add("\tmovq\t%rax, %rsi");
        }
        if (!evaluate(first, code, below)) return null;
        code.add("\tmovq\t%rax, %rdi");
        if (width != null) {                                    // %rcx last: evaluate reads the live one
            if (!evaluate(width, code, below)) return null;
            code.add("\tmovq\t%rax, %rcx");
        }
        long packed = size | (store ? 1L << 8 : 0) | (width != null ? 1L << 10 : 0) | (Math.min(step, 0x7fffffffL) << 16);
        code.add("\tmovabsq\t$" + packed + ", %rdx");
        // through the GOT, not the PLT: lazy binding's first call would change %r10 and %r11, which the
        // uninstrumented code PlainCover checks keeps live across the call
        code.add("\tcall\t*__memtrace_check_loop@GOTPCREL(%rip)" + CheckSites.lineOf(parsed, checkLine));
        code.addAll(List.of("\tpopq\t%rax", "\tpopq\t%rdx", "\tpopq\t%rsi", "\tpopq\t%rdi", "\tpopfq"));
        if (width != null) code.add("\tpopq\t%rcx");
        code.add("\tleaq\t128(%rsp), %rsp");
        return code;
    }

    /** rax = v, from the registers' values before the saves (%rdx is the scratch; below: bytes saved under the flags). */
    private static boolean evaluate(Linear v, List<String> code, int below) {
        code.add("\tmovabsq\t$" + v.constant() + ", %rax");
        for (var t : v.terms().entrySet()) {
            String r = t.getKey();
            long k = t.getValue();
            if (k != (int) k) return false;
            int slot = SAVED.indexOf(r);
            if (slot >= 0) code.add("\tmovq\t" + 8 * slot + "(%rsp), %rdx");
            else if (r.equals("rsp")) code.add("\tleaq\t" + (SAVED_BYTES + below) + "(%rsp), %rdx");
            else code.add("\tmovq\t%" + r + ", %rdx");
            if (k != 1) code.add("\timulq\t$" + k + ", %rdx, %rdx");
            code.add("\taddq\t%rdx, %rax");
        }
        return true;
    }
}
