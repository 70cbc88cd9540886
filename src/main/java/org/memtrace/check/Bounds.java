package org.memtrace.check;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The registers' ranges at one line, for {@link InBounds}: a register has a {@link Value} (an interval, or the
 * address of a global plus an interval) or is absent (anything). Intervals are kept within ±2^47 so that no
 * sum or shift overflows; a wider one is forgotten. Only what is exact is followed: a partial (8- or 16-bit)
 * write forgets the register, a 32-bit write zero-extends (so its result is at least in [0, 2^32 - 1]).
 */
final class Bounds {
    /** @param symbol a global's name, or null for a plain number; lo..hi its offset (or value), inclusive */
    record Value(String symbol, long lo, long hi) {}

    private static final long LIMIT = 1L << 47;
    private static final long U32 = 0xffffffffL;
    private static final Pattern MEMORY = Pattern.compile("^([^(]*)\\((%\\w+)?(?:,(%\\w+)(?:,(\\d))?)?\\)$");
    private static final Pattern SYMBOL_DISP = Pattern.compile("^([.$A-Za-z_][.$\\w]*)(?:([+-])(\\d+))?$");
    private static final Pattern IMMEDIATE = Pattern.compile("^\\$(-?\\d+)$");

    private final Map<String, Value> regs = new HashMap<>();

    Bounds copy() {
        Bounds b = new Bounds();
        b.regs.putAll(regs);
        return b;
    }

    Value get(String r) {
        return regs.get(r);
    }

    /** The union of two states (null: unreachable). */
    static Bounds join(Bounds a, Bounds b) {
        if (a == null) return b == null ? null : b.copy();
        if (b == null) return a.copy();
        Bounds out = new Bounds();
        a.regs.forEach((r, va) -> {
            Value vb = b.regs.get(r);
            if (vb != null && Objects.equals(va.symbol(), vb.symbol())) {
                out.regs.put(r, new Value(va.symbol(), Math.min(va.lo(), vb.lo()), Math.max(va.hi(), vb.hi())));
            }
        });
        return out;
    }

    /** This state with every register that differs in {@code next} forgotten: loops end. */
    Bounds widen(Bounds next) {
        Bounds out = new Bounds();
        regs.forEach((r, v) -> {
            if (v.equals(next.regs.get(r))) out.regs.put(r, v);
        });
        return out;
    }

    /** Intersects a plain register's interval with [lo, hi] (an unknown one becomes [lo, hi]). */
    void narrow(String r, long lo, long hi) {
        Value v = regs.get(r);
        if (v != null && v.symbol() != null) return;
        long l = v == null ? lo : Math.max(v.lo(), lo), h = v == null ? hi : Math.min(v.hi(), hi);
        if (l <= h) put(r, new Value(null, l, h));
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Bounds b && regs.equals(b.regs);
    }

    @Override
    public int hashCode() {
        return regs.hashCode();
    }

    private void put(String r, Value v) {
        if (v == null || v.lo() < -LIMIT || v.hi() > LIMIT || v.lo() > v.hi()) regs.remove(r);
        else regs.put(r, v);
    }

    private static Value number(long lo, long hi) {
        return new Value(null, lo, hi);
    }

    private static Value add(Value a, Value b) {
        if (a == null || b == null || a.symbol() != null && b.symbol() != null) return null;
        String s = a.symbol() != null ? a.symbol() : b.symbol();
        return new Value(s, a.lo() + b.lo(), a.hi() + b.hi());
    }

    private static Value scale(Value a, long k) {
        if (a == null || a.symbol() != null || k < 0 || k > (1 << 16)) return null;
        if (Math.abs(a.lo()) > LIMIT / (1 << 16) || Math.abs(a.hi()) > LIMIT / (1 << 16)) return null;
        return number(a.lo() * k, a.hi() * k);
    }

    /** An operand's value: an immediate, a register (whole 64-bit only), or null. */
    private Value value(String op) {
        Matcher imm = IMMEDIATE.matcher(op);
        if (imm.matches()) {
            long c = Long.parseLong(imm.group(1));
            return number(c, c);
        }
        if (op.startsWith("$")) {
            Matcher s = SYMBOL_DISP.matcher(op.substring(1));   // movq $table, %rax (non-PIC)
            if (s.matches()) {
                long d = s.group(3) == null ? 0 : Long.parseLong(s.group(3)) * (s.group(2).equals("-") ? -1 : 1);
                return new Value(s.group(1), d, d);
            }
            return null;
        }
        return Registers.wide(op) ? regs.get(Registers.full(op)) : null;
    }

    /** An AT&T memory operand's address: {@code sym+C(%rip)}, {@code C(%b,%i,s)}, {@code sym(,%i,s)}. */
    Value address(String op) {
        Matcher m = MEMORY.matcher(op);
        if (!m.matches()) return null;
        String disp = m.group(1).strip();
        Value v;
        if (disp.isEmpty()) {
            v = number(0, 0);
        } else if (disp.matches("-?\\d+")) {
            long d = Long.parseLong(disp);
            v = number(d, d);
        } else {
            Matcher s = SYMBOL_DISP.matcher(disp);
            if (!s.matches() || s.group(1).contains("@")) return null;
            long d = s.group(3) == null ? 0 : Long.parseLong(s.group(3)) * (s.group(2).equals("-") ? -1 : 1);
            v = new Value(s.group(1), d, d);
        }
        if ("%rip".equals(m.group(2))) return m.group(3) == null && v.symbol() != null ? v : null;
        if (m.group(2) != null) {
            if (!Registers.wide(m.group(2))) return null;
            v = add(v, regs.get(Registers.full(m.group(2))));
        }
        if (m.group(3) != null) {
            if (!Registers.wide(m.group(3))) return null;
            v = add(v, scale(regs.get(Registers.full(m.group(3))), m.group(4) == null ? 1 : Long.parseLong(m.group(4))));
        }
        return v;
    }

    /** Follows one instruction (not a jump: InBounds handles those). */
    void step(AsmLine.Instruction in) {
        String m = in.mnemonic();
        List<String> ops = in.operands();
        if (m.startsWith("call")) {
            Registers.CALLER_SAVED.forEach(regs::remove);
            return;
        }
        if (m.contains(" ") || ops.isEmpty()) {        // rep/lock forms, cqto, cltq, cpuid, leave ...: forget all
            regs.clear();
            return;
        }
        if (m.startsWith("xchg") || m.startsWith("xadd") || m.startsWith("cmpxchg")) {
            for (String o : ops) if (Registers.full(o) != null) regs.remove(Registers.full(o));
            regs.remove("rax");
            return;
        }
        if (m.startsWith("cmp") || m.startsWith("test") || m.startsWith("bt") && ops.size() == 2
                && !m.startsWith("btc") && !m.startsWith("btr") && !m.startsWith("bts") || m.startsWith("push")
                || m.startsWith("prefetch") || m.startsWith("nop")) {
            return;
        }
        if (ops.size() == 1 && (m.startsWith("mul") || m.startsWith("imul") || m.startsWith("div") || m.startsWith("idiv"))) {
            regs.remove("rax");
            regs.remove("rdx");
            return;
        }
        String dstOp = ops.getLast();
        String dst = Registers.full(dstOp);
        if (dst == null) return;                       // a store or a vector register
        boolean wide = Registers.wide(dstOp), dword = Registers.dword(dstOp);
        if (!wide && !dword) {
            regs.remove(dst);
            return;
        }
        Value d = regs.get(dst);
        Value s = ops.size() >= 2 ? value(ops.getFirst()) : null;
        String src = ops.getFirst();
        Value r = switch (m) {
            case "movq", "movl", "mov" -> ops.size() == 2 ? s : null;
            case "leaq", "leal", "lea" -> address(src);
            case "movzbl", "movzbq", "movzbw" -> number(0, 0xff);
            case "movzwl", "movzwq" -> number(0, 0xffff);
            case "addq", "addl", "add" -> ops.size() == 2 ? add(d, s) : null;
            case "subq", "subl", "sub" -> ops.size() == 2 && s != null && s.symbol() == null
                    ? add(d, number(-s.hi(), -s.lo())) : null;
            case "incq", "incl" -> add(d, number(1, 1));
            case "decq", "decl" -> add(d, number(-1, -1));
            case "andq", "andl", "and" -> s != null && s.symbol() == null && s.lo() == s.hi() && s.lo() >= 0
                    ? number(0, d != null && d.symbol() == null && d.lo() >= 0 ? Math.min(d.hi(), s.lo()) : s.lo()) : null;
            case "salq", "shlq", "sall", "shll" -> ops.size() == 2 && s != null && s.symbol() == null && s.lo() == s.hi()
                    && s.lo() >= 0 && s.lo() < 16 ? scale(d, 1L << s.lo()) : null;
            case "shrq", "shrl" -> ops.size() == 2 && s != null && s.symbol() == null && s.lo() == s.hi() && s.lo() > 0
                    && s.lo() < 64 ? (d != null && d.symbol() == null && d.lo() >= 0 && (wide || d.hi() <= U32)
                    ? number(d.lo() >> s.lo(), d.hi() >> s.lo())
                    : wide ? number(0, -1L >>> s.lo()) : number(0, U32 >>> s.lo())) : null;
            case "xorq", "xorl", "xor" -> src.equals(dstOp) ? number(0, 0) : null;
            case "imulq", "imull", "imul" -> ops.size() == 3 && s != null && s.symbol() == null && s.lo() == s.hi()
                    ? scale(value(ops.get(1)), s.lo()) : null;
            default -> m.startsWith("cmov") && ops.size() == 2 ? joinValue(d, s) : null;
        };
        if (dword) {
            // a 32-bit write zero-extends: its 64-bit value is the 32-bit result when that is known in [0, 2^32)
            if (r == null || r.symbol() != null || r.lo() < 0 || r.hi() > U32) r = number(0, U32);
        }
        put(dst, r);
    }

    private static Value joinValue(Value a, Value b) {
        if (a == null || b == null || !Objects.equals(a.symbol(), b.symbol())) return null;
        return new Value(a.symbol(), Math.min(a.lo(), b.lo()), Math.max(a.hi(), b.hi()));
    }
}
