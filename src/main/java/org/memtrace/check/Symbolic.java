package org.memtrace.check;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Symbolic execution of straight-line code over {@link Linear} values: every register starts as itself
 * (its value at the reference point), moves, additions, constant shifts and multiplications and {@code lea}
 * keep values linear, and any other write gives the register a fresh opaque value (a name no register has,
 * {@code $1}, {@code $2}...), so that two addresses computed from one loaded pointer still share a base.
 * A call gives every caller-saved register a fresh value. Only whole 64-bit writes are followed; a write to
 * a part of a register is opaque. A 32-bit write zero-extends: the register is then <em>narrow</em> (its upper
 * half is zero), {@code movl $imm} and {@code xorl %r,%r} are exact, and {@code addl/subl $c} on a narrow
 * register adds c, assuming what a counting loop's counter does: it does not wrap around 2^32.
 */
final class Symbolic {
    private static final Pattern MEMORY = Pattern.compile("^(-?\\d+)?\\((%\\w+)?(?:,(%\\w+)(?:,(\\d))?)?\\)$");
    private static final Pattern IMMEDIATE = Pattern.compile("^\\$(-?\\d+)$");
    private static final Set<String> RAX_RDX = Set.of("cltq", "cqto", "cltd", "cwtl", "cqo", "cdq", "cdqe", "cwtd");
    private static final Set<String> STRINGS = Set.of("movsb", "movsw", "movsl", "movsq", "stosb", "stosw", "stosl",
            "stosq", "lodsb", "lodsw", "lodsl", "lodsq", "scasb", "scasw", "scasl", "scasq", "cmpsb", "cmpsw", "cmpsl", "cmpsq");

    private final Map<String, Linear> regs = new HashMap<>();
    private final Set<String> narrow = new HashSet<>();
    private int fresh;

    Symbolic() {
        this(Set.of());
    }

    /** @param narrowAtStart registers whose upper half is known zero at the reference point */
    Symbolic(Set<String> narrowAtStart) {
        for (String r : Registers.ALL) regs.put(r, Linear.register(r));
        narrow.addAll(narrowAtStart);
    }

    /** Whether the register's upper 32 bits are zero here. */
    boolean narrow(String r) {
        return narrow.contains(r);
    }

    Linear get(String r) {
        return regs.get(r);
    }

    /** Whether a term of a value is a register's value at the reference point (not an opaque one). */
    static boolean isRegister(String term) {
        return !term.startsWith("$");
    }

    private Linear opaque() {
        return Linear.register("$" + ++fresh);
    }

    /** Every register's value now. */
    Map<String, Linear> snapshot() {
        return new HashMap<>(regs);
    }

    /** Gives every register that changed since {@code before} a fresh opaque value (a write on some paths only). */
    void forgetChanged(Map<String, Linear> before) {
        for (String r : Registers.ALL) {
            if (!regs.get(r).equals(before.get(r))) set(r, null);
        }
    }

    void call() {
        for (String r : Registers.CALLER_SAVED) regs.put(r, opaque());
        narrow.removeAll(Registers.CALLER_SAVED);
    }

    /** The value of an AT&T memory operand's address, or null when it is not linear in registers. */
    Linear address(String operand) {
        Matcher m = MEMORY.matcher(operand);
        if (!m.matches()) return null;
        long disp = m.group(1) == null ? 0 : Long.parseLong(m.group(1));
        Linear v = Linear.constant(disp);
        if (m.group(2) != null) {
            String base = Registers.full(m.group(2));
            if (base == null || !Registers.wide(m.group(2))) return null;
            v = v.plus(regs.get(base));
        }
        if (m.group(3) != null) {
            String index = Registers.full(m.group(3));
            if (index == null || !Registers.wide(m.group(3))) return null;
            v = v.plus(regs.get(index).times(m.group(4) == null ? 1 : Long.parseLong(m.group(4))));
        }
        return v;
    }

    private Linear value(String operand) {
        Matcher imm = IMMEDIATE.matcher(operand);
        if (imm.matches()) return Linear.constant(Long.parseLong(imm.group(1)));
        if (Registers.wide(operand)) return regs.get(Registers.full(operand));
        return null;
    }

    /** Gives a register a value (an inner loop's exit value), or a fresh opaque one when v is null. */
    void assign(String r, Linear v) {
        set(r, v);
    }

    private void set(String r, Linear v) {
        regs.put(r, v == null ? opaque() : v);
        narrow.remove(r);
    }

    void step(AsmLine.Instruction in) {
        String m = in.mnemonic();
        List<String> ops = in.operands();
        if (m.startsWith("call")) {
            call();
            return;
        }
        if (m.contains(" ") || STRINGS.contains(m)) {  // rep/lock prefixes, string ops (movsd is SSE's: no 'd')
            for (String r : List.of("rdi", "rsi", "rcx", "rax")) set(r, null);
            return;
        }
        if (RAX_RDX.contains(m) || ((m.startsWith("mul") || m.startsWith("imul") || m.startsWith("div")
                || m.startsWith("idiv")) && ops.size() == 1)) {
            set("rax", null);
            set("rdx", null);
            return;
        }
        if (m.equals("syscall") || m.equals("cpuid") || m.startsWith("rdtsc")) {
            for (String r : List.of("rax", "rbx", "rcx", "rdx", "r11")) set(r, null);
            return;
        }
        if (m.startsWith("xchg") || m.startsWith("xadd") || m.startsWith("cmpxchg")) {
            for (String o : ops) if (Registers.full(o) != null) set(Registers.full(o), null);
            set("rax", null);
            return;
        }
        if (m.startsWith("push")) {
            regs.put("rsp", regs.get("rsp").plus(-8));
            return;
        }
        if (m.startsWith("pop")) {
            regs.put("rsp", regs.get("rsp").plus(8));
            if (!ops.isEmpty() && Registers.full(ops.getFirst()) != null) set(Registers.full(ops.getFirst()), null);
            return;
        }
        if (m.equals("leave")) {
            set("rsp", null);
            set("rbp", null);
            return;
        }
        if (ops.isEmpty() || m.startsWith("cmp") || m.startsWith("test") || m.startsWith("j") || m.startsWith("bt")
                && !m.startsWith("btc") && !m.startsWith("btr") && !m.startsWith("bts")) {
            return;
        }
        String dstOp = ops.getLast();
        String dst = Registers.full(dstOp);
        if (dst == null) return;                     // a store or a vector register
        boolean wide = Registers.wide(dstOp);
        Linear d = regs.get(dst);
        Linear result = null;
        if (ops.size() == 2 && wide) {
            String src = ops.getFirst();
            Linear s = value(src);
            switch (m) {
                case "movq", "mov" -> result = s;
                case "leaq", "lea" -> result = address(src);
                case "addq", "add" -> result = s == null ? null : d.plus(s);
                case "subq", "sub" -> result = s == null ? null : d.minus(s);
                case "salq", "shlq", "sal", "shl" -> result = s != null && s.terms().isEmpty() && s.constant() >= 0
                        && s.constant() < 32 ? d.times(1L << s.constant()) : null;
                case "imulq", "imul" -> result = s != null && s.terms().isEmpty() ? d.times(s.constant()) : null;
                case "xorq", "xor" -> result = src.equals(dstOp) ? Linear.constant(0) : null;
                default -> result = null;
            }
        } else if (ops.size() == 1 && wide) {
            switch (m) {
                case "incq", "inc" -> result = d.plus(1);
                case "decq", "dec" -> result = d.minus(Linear.constant(1));
                case "negq", "neg" -> result = d.times(-1);
                case "salq", "shlq" -> result = d.times(2);
                default -> result = null;
            }
        } else if (ops.size() == 3 && wide && (m.equals("imulq") || m.equals("imul"))) {
            Linear k = value(ops.get(0)), s = value(ops.get(1));
            result = k != null && s != null && k.terms().isEmpty() ? s.times(k.constant()) : null;
        } else if (Registers.dword(dstOp)) {
            boolean wasNarrow = narrow.contains(dst);
            Matcher imm = ops.size() == 2 ? IMMEDIATE.matcher(ops.getFirst()) : null;
            long c = imm != null && imm.matches() ? Long.parseLong(imm.group(1)) : Long.MIN_VALUE;
            if (m.equals("movl") && c >= 0) result = Linear.constant(c);
            else if (m.equals("xorl") && ops.getFirst().equals(dstOp)) result = Linear.constant(0);
            else if (wasNarrow && m.equals("addl") && c != Long.MIN_VALUE) result = d.plus(c);
            else if (wasNarrow && m.equals("subl") && c != Long.MIN_VALUE) result = d.plus(-c);
            else if (wasNarrow && m.equals("incl")) result = d.plus(1);
            else if (wasNarrow && m.equals("decl")) result = d.plus(-1);
            set(dst, result);
            narrow.add(dst);
            return;
        }
        set(dst, result);
    }
}
