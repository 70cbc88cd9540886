package org.memtrace.testutil;

import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The grammar of docs/trace-format.md as regular expressions: every line a test's trace holds must match
 * one production. Raw ({@code #}) lines must print addresses as hex; symbolic fields are any text without a
 * comma or white space, '%' only as the start of an escape {@code %XX} (names are checked by the tests that
 * care about them).
 */
public final class MadtGrammar {
    private MadtGrammar() {}

    private static final String HEX = "0x(?:0|[1-9a-f][0-9a-f]*)";
    private static final String ESCAPE = "%[0-9A-F]{2}";
    private static final String NAME = "(?:[^,\\s%]|" + ESCAPE + ")+";
    /** A path in a comment line: escaped like a name, so it holds no white space. */
    private static final String PATH = "(?:[^\\s%]|" + ESCAPE + ")+";
    private static final String DIGITS = "\\d+";
    /**
     * A source line, {@code file:line}, escaped like a name: symbolic lines only; in inlined code the frames,
     * {@code ;} between them ({@code get(a.c:6);main+57(a.c:20)}).
     */
    private static final String SOURCE = "(?:(?:[^,\\s%;]|" + ESCAPE + ")+:\\d+|(?:[^,\\s%;]|" + ESCAPE + ")+(?:;(?:[^,\\s%;]|" + ESCAPE + ")+)+)";
    private static final String REGION = "(?:\\[(?:heap|stack|anon|data|file|unknown|vdso)\\]|(?:[^,/\\[\\s%]|" + ESCAPE
            + ")(?:[^,/\\s%]|" + ESCAPE + ")*)";
    private static final String VIA = "(?:memcpy|memmove|memset|rep_movs|rep_stos|rep_lods|rep_cmps|rep_scas|[a-z_][a-z0-9_]*|syscall\\d+)";

    /**
     * The fields after {@code seq:} for each letter, with {@code A} standing for an address (hex on # lines)
     * and {@code B} for a block (hex, or on $ lines a forged name in angle brackets).
     */
    private static final Map<Character, String> FIELDS = Map.ofEntries(
            Map.entry('L', "A,R,A,D,D(?:,D)?(?:,P)?"),
            Map.entry('S', "A,R,A,D,D(?:,D)?(?:,P)?"),
            Map.entry('Y', "A,R,A,R,D,A,D,V"),
            Map.entry('W', "A,R,D,A,D,V"),
            Map.entry('G', "A,R,D,A,D,V"),
            Map.entry('M', "B,D,D(?:,K)?"),
            Map.entry('C', "B,D,D(?:,K)?"),
            Map.entry('P', "B,D,D(?:,K)?"),
            Map.entry('R', "B,D,B,D(?:,K)?"),
            Map.entry('E', "B,D,B,D(?:,K)?"),
            Map.entry('F', "B,D(?:,K)?"),
            Map.entry('U', "B,D,D(?:,K)?"));

    private static final Pattern NUMBERED = Pattern.compile("([LSYWGMCPREFU])([#$])(\\d+):(.*)");

    private static final List<Pattern> COMMENTS = List.of(
            "agent pid=\\d+ page-size=\\d+ regions=\\d+",
            "module (?:" + PATH + ")? bias=" + HEX + " build-id=[0-9a-f]*",
            "mapping " + HEX + "-" + HEX + " [r-][w-][x-] offset=" + HEX + "( traced)?( " + PATH + ")?",
            "(un)?traced (data|heap|anon|file) " + HEX + "-" + HEX + " [r-][w-][x-]",
            "(start|stop) tid=\\d+( caller=" + NAME + ")?",
            "thread \\d+ start parent=\\d+",
            "thread \\d+ exit code=-?\\d+",
            "fork tid=\\d+ child=\\d+ \\(untraced\\)",
            "stats faults=\\d+ steps=\\d+ syscalls=\\d+ windows-at-risk=\\d+ untraced-faults=\\d+",
            "exit status=-?\\d+ tid=\\d+",
            "exec " + PATH + " tid=\\d+",
            "exec-failed " + PATH + " errno=\\d+ tid=\\d+",
            "fatal signal \\d+ \\([A-Z0-9+]+\\) ip=" + NAME + " addr=" + HEX + " tid=\\d+",
            "incomplete [^\\n]+",
            "stack [1-9]\\d*( " + NAME + ")+")
            .stream().map(Pattern::compile).toList();

    private static final Map<String, Pattern> COMPILED = new java.util.concurrent.ConcurrentHashMap<>();

    /** One letter of a shape at a time: the expressions put in hold capital letters of their own. */
    private static Pattern production(String shape, boolean raw) {
        StringBuilder re = new StringBuilder();
        for (char c : shape.toCharArray()) {
            re.append(switch (c) {
                case 'A' -> raw ? HEX : NAME;
                case 'B' -> raw ? HEX : "(?:" + HEX + "|<" + NAME + ">)";
                case 'R' -> REGION;
                case 'D' -> DIGITS;
                case 'V' -> VIA;
                case 'K' -> "s[1-9]\\d*";
                case 'P' -> raw ? "(?!)" : SOURCE;
                default -> String.valueOf(c);
            });
        }
        return Pattern.compile(re.toString());
    }

    /** Null when {@code line} is well-formed, else why not. */
    public static String check(String line) {
        if (line.startsWith("# ")) {
            String text = line.substring(2);
            return COMMENTS.stream().anyMatch(p -> p.matcher(text).matches()) ? null : "unknown comment line";
        }
        var m = NUMBERED.matcher(line);
        if (!m.matches()) return "neither a numbered line nor a comment";
        boolean raw = m.group(2).equals("#");
        String shape = FIELDS.get(m.group(1).charAt(0));
        Pattern p = COMPILED.computeIfAbsent(shape + raw, k -> production(shape, raw));
        return p.matcher(m.group(4)).matches() ? null : "fields do not match the " + m.group(1) + " production";
    }
}
