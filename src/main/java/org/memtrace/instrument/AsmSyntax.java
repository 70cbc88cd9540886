package org.memtrace.instrument;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The lexical side of GNU as's AT&T syntax that the rewriter needs: statements of a line, labels, prefixes,
 * operands and memory operands. Only what gcc writes is understood in full; anything else is reported as
 * not understood, which leaves its function uninstrumented.
 */
final class AsmSyntax {
    /** Prefixes gcc or inline assembly may write as separate words (or separate statements) before a mnemonic. */
    static final Set<String> PREFIXES = Set.of("lock", "rep", "repe", "repz", "repne", "repnz", "notrack", "bnd",
            "data16", "data32", "addr32", "rex64", "xacquire", "xrelease", "cs", "ds", "es", "ss", "fs", "gs");

    private AsmSyntax() {
    }

    /**
     * The statements of one source line: the comment ({@code #} outside a string) removed, split at
     * {@code ;} outside strings, and a leading {@code label:} split off as a statement of its own.
     */
    static List<String> statements(String line) {
        var result = new ArrayList<String>(1);
        int start = 0;
        boolean inString = false;
        int n = line.length();
        int end = n;
        for (int i = 0; i < n; i++) {
            char c = line.charAt(i);
            if (inString) {
                if (c == '\\') {
                    i++;
                } else if (c == '"') {
                    inString = false;
                }
            } else if (c == '"') {
                inString = true;
            } else if (c == '#') {
                end = i;
                break;
            } else if (c == ';') {
                addStatement(result, line.substring(start, i));
                start = i + 1;
            }
        }
        if (start < end) {
            addStatement(result, line.substring(start, end));
        }
        return result;
    }

    private static void addStatement(List<String> out, String raw) {
        String s = raw.strip();
        while (!s.isEmpty()) {
            int colon = labelEnd(s);
            if (colon < 0) {
                out.add(s);
                return;
            }
            out.add(s.substring(0, colon + 1));
            s = s.substring(colon + 1).strip();
        }
    }

    /** The index of the colon ending a leading label ({@code name:}, {@code 1:}), or -1. */
    static int labelEnd(String s) {
        int i = 0;
        int n = s.length();
        if (n == 0) {
            return -1;
        }
        char first = s.charAt(0);
        if (!(Character.isLetterOrDigit(first) || first == '_' || first == '.' || first == '$')) {
            return -1;
        }
        while (i < n) {
            char c = s.charAt(i);
            if (Character.isLetterOrDigit(c) || c == '_' || c == '.' || c == '$' || c == '@') {
                i++;
            } else {
                break;
            }
        }
        return i < n && s.charAt(i) == ':' ? i : -1;
    }

    /** The first word of a statement (a mnemonic, prefix or directive name). */
    static String firstWord(String statement) {
        int i = 0;
        while (i < statement.length() && !Character.isWhitespace(statement.charAt(i))) {
            i++;
        }
        return statement.substring(0, i);
    }

    /** What follows the first word, stripped. */
    static String afterFirstWord(String statement) {
        return statement.substring(firstWord(statement).length()).strip();
    }

    /** {@code name = value} or {@code name=value}: a symbol assignment, not an instruction. */
    static boolean isAssignment(String statement) {
        int eq = statement.indexOf('=');
        if (eq <= 0 || (eq + 1 < statement.length() && statement.charAt(eq + 1) == '=')) {
            return false;
        }
        String name = statement.substring(0, eq).strip();
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (!(Character.isLetterOrDigit(c) || c == '_' || c == '.' || c == '$')) {
                return false;
            }
        }
        return !name.isEmpty();
    }

    /** Splits directive or instruction operands at the commas outside parentheses and strings. */
    static List<String> operands(String text) {
        var result = new ArrayList<String>(3);
        if (text.isBlank()) {
            return result;
        }
        int depth = 0;
        boolean inString = false;
        int start = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (inString) {
                if (c == '\\') {
                    i++;
                } else if (c == '"') {
                    inString = false;
                }
            } else if (c == '"') {
                inString = true;
            } else if (c == '(') {
                depth++;
            } else if (c == ')') {
                depth--;
            } else if (c == ',' && depth == 0) {
                result.add(text.substring(start, i).strip());
                start = i + 1;
            }
        }
        result.add(text.substring(start).strip());
        return result;
    }

    /**
     * An instruction statement taken apart: its prefixes, mnemonic and operands.
     *
     * @param text the statement as it will be written out
     */
    record Instruction(String text, List<String> prefixes, String mnemonic, List<String> operands) {

        static Instruction parse(String text) {
            var prefixes = new ArrayList<String>(1);
            String rest = text.strip();
            String word = firstWord(rest);
            while (PREFIXES.contains(word.toLowerCase()) && rest.length() > word.length()) {
                prefixes.add(word);
                rest = afterFirstWord(rest);
                word = firstWord(rest);
            }
            return new Instruction(text, List.copyOf(prefixes), word.toLowerCase(), AsmSyntax.operands(afterFirstWord(rest)));
        }

        /** The operands that address memory: the only kind of operand without a {@code $} or {@code %} start. */
        List<String> memoryOperands() {
            var result = new ArrayList<String>(1);
            for (String o : operands) {
                String s = o.startsWith("*") ? o.substring(1).strip() : o;
                if (s.isEmpty() || s.startsWith("$") || s.startsWith("{")) {
                    continue;
                }
                if (s.startsWith("%") && (!s.contains("(") && !s.contains(":") || s.startsWith("%st("))) {
                    continue; // a register, x87's %st(i) included
                }
                int brace = s.indexOf('{');
                result.add(brace > 0 ? s.substring(0, brace).strip() : s); // AVX-512 {%k1}, {1to16} decorations
            }
            return result;
        }
    }
}
