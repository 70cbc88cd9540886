package org.memtrace.check;

import java.util.regex.Pattern;

/** What {@link PlainCover} and the loop hoists read off an instruction's memory operand: which, how wide, whether written. */
final class MemoryOperands {
    private static final Pattern SYMBOL = Pattern.compile("[A-Za-z_.$][\\w.$@]*");

    private MemoryOperands() {}

    /** Index of the operand that addresses memory, -1 when none, -2 when there are two. */
    static int memoryOperand(AsmLine.Instruction in) {
        if (in.isJump() && !in.operands().isEmpty() && !in.operands().getFirst().startsWith("*")) return -1;
        if (in.mnemonic().startsWith("call") && !in.operands().getFirst().startsWith("*")) return -1;
        int found = -1;
        for (int k = 0; k < in.operands().size(); k++) {
            String op = in.operands().get(k);
            boolean memory = op.contains("(") || !op.startsWith("$") && !op.startsWith("%") && !op.startsWith("*")
                    && SYMBOL.matcher(op).lookingAt() || op.startsWith("*") && !op.startsWith("*%");
            if (!memory) continue;
            if (found >= 0) return -2;
            found = k;
        }
        return found;
    }

    /** Whether the access writes: the memory operand is the destination (read-modify-write counts as a write). */
    static boolean store(AsmLine.Instruction in, String op) {
        String m = in.mnemonic();
        if (m.startsWith("cmp") || m.startsWith("test") || m.startsWith("ucomis") || m.startsWith("comis")
                || m.startsWith("bt") && !m.startsWith("btc") && !m.startsWith("btr") && !m.startsWith("bts")) return false;
        return in.operands().getLast().equals(op) && in.operands().size() > 1
                || in.operands().size() == 1 && !m.startsWith("mul") && !m.startsWith("imul") && !m.startsWith("div")
                && !m.startsWith("idiv");
    }

    /** How many bytes the instruction's memory operand covers, or -1 when this does not know. */
    static int width(AsmLine.Instruction in) {
        String m = in.mnemonic();
        boolean ymm = false, xmm = false;
        for (String op : in.operands()) {
            ymm |= op.startsWith("%ymm");
            xmm |= op.startsWith("%xmm");
        }
        if (m.startsWith("v") || m.startsWith("pinsr") || m.startsWith("pextr") || m.startsWith("pmovzx")
                || m.startsWith("pmovsx") || m.startsWith("cmov") || m.startsWith("set") || m.startsWith("f")) {
            return ymm ? 32 : -1;                                 // AVX forms, x87 and the rest: not read here
        }
        if (m.startsWith("cvttsd2si") || m.startsWith("cvtsd2si")) return 8;
        if (m.startsWith("cvttss2si") || m.startsWith("cvtss2si")) return 4;
        if (xmm) {
            if (m.startsWith("cvtsi2")) return m.endsWith("q") ? 8 : 4;
            if (m.equals("movq") || m.equals("movddup") || m.equals("cvtps2pd") || m.equals("cvtdq2pd") || m.equals("cvtsd2ss")
                    || m.matches("mov[lh]p[sd]")) return 8;
            if (m.equals("movd") || m.equals("cvtss2sd")) return 4;
            if (m.endsWith("sd")) return m.endsWith("pd") ? 16 : 8;  // scalar double (movsd, addsd, ucomisd...)
            if (m.endsWith("ss") && !m.endsWith("ps")) return 4;
            return 16;
        }
        switch (m) {
            case "movzbl", "movzbw", "movzbq", "movsbl", "movsbw", "movsbq" -> { return 1; }
            case "movzwl", "movzwq", "movswl", "movswq" -> { return 2; }
            case "movslq" -> { return 4; }
            default -> { }
        }
        char suffix = m.charAt(m.length() - 1);
        return switch (suffix) {
            case 'b' -> 1;
            case 'w' -> 2;
            case 'l' -> 4;
            case 'q' -> 8;
            default -> -1;
        };
    }
}
