package org.memtrace.check;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One line of gcc's AT&T assembly as the check rewriter reads it: an instruction (mnemonic and operands,
 * the destination last), a label, a directive, or anything else (blank, comment). gcc's own output only:
 * one statement a line, no macros.
 */
sealed interface AsmLine {
    record Instruction(String mnemonic, List<String> operands) implements AsmLine {
        /** The operand as a 64-bit register name ("rax" for %eax, %ax, %al), or null when it is not a GPR. */
        String register(int i) {
            return Registers.full(operands.get(i));
        }

        boolean isJump() {
            return mnemonic.startsWith("j");
        }
    }

    record Label(String name) implements AsmLine {}

    record Directive(String name, String arguments) implements AsmLine {}

    record Other() implements AsmLine {}

    Pattern LABEL = Pattern.compile("^([.$\\w]+):\\s*(#.*)?$");

    static AsmLine parse(String line) {
        String t = line.strip();
        if (t.equals("#APP") || t.equals("#NO_APP")) return new Directive(t, ""); // inline assembly's bounds
        if (t.isEmpty() || t.startsWith("#")) return new Other();
        Matcher m = LABEL.matcher(t);
        if (m.matches()) return new Label(m.group(1));
        if (t.startsWith(".")) {
            int sp = indexOfBlank(t);
            return new Directive(sp < 0 ? t : t.substring(0, sp), sp < 0 ? "" : t.substring(sp).strip());
        }
        int sp = indexOfBlank(t);
        String mnemonic = sp < 0 ? t : t.substring(0, sp);
        String rest = sp < 0 ? "" : t.substring(sp).strip();
        if (mnemonic.equals("rep") || mnemonic.equals("repz") || mnemonic.equals("repnz") || mnemonic.equals("repe")
                || mnemonic.equals("repne") || mnemonic.equals("lock")) {
            return new Instruction(mnemonic + " " + rest, List.of());
        }
        return new Instruction(mnemonic, operands(rest));
    }

    private static int indexOfBlank(String t) {
        for (int i = 0; i < t.length(); i++) if (t.charAt(i) == ' ' || t.charAt(i) == '\t') return i;
        return -1;
    }

    /** Operands split at commas outside parentheses; a trailing comment dropped. */
    static List<String> operands(String s) {
        List<String> out = new ArrayList<>();
        int depth = 0, start = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '#' && depth == 0) {
                s = s.substring(0, i);
                break;
            }
            if (c == '(') depth++;
            else if (c == ')') depth--;
            else if (c == ',' && depth == 0) {
                out.add(s.substring(start, i).strip());
                start = i + 1;
            }
        }
        String last = s.substring(Math.min(start, s.length())).strip();
        if (!last.isEmpty()) out.add(last);
        return out;
    }
}
