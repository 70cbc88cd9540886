package org.memtrace.check;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The table of call sites {@link CheckRewriter} adds to the object (its layout: {@link CheckRewriter}): a
 * label after every call, and each call's function, extent and {@code file:line}, read off the assembly's
 * {@code .type}, {@code .size}, {@code .file} and {@code .loc} directives.
 */
final class CheckSites {
    private static final Pattern FILE = Pattern.compile("^(\\d+)\\s+\"((?:[^\"\\\\]|\\\\.)*)\"(?:\\s+\"((?:[^\"\\\\]|\\\\.)*)\")?.*");
    private static final Pattern LOC = Pattern.compile("^(\\d+)\\s+(\\d+).*");
    private static final String LOC_MARK = "# memtrace-check-loc ";
    /** The return point of an out-of-line slow path ({@link InlineChecks#outOfLine}): a call site. */
    private static final Pattern RETURN_POINT = Pattern.compile("\\.Lmtc_q\\d+");
    /** glibc's inline wrappers of _FORTIFY_SOURCE (memcpy calling __memcpy_chk): the line of their caller is kept. */
    private static final Pattern FORTIFY_HEADER = Pattern.compile("/bits/(string_fortified|strings_fortified|stdio2|wchar2|unistd|socket2)\\.h$");

    private CheckSites() {}

    /** A marker for a call the pruner wrote, naming the source line of the check it stands for. */
    static String lineOf(List<AsmLine> parsed, int line) {
        for (int i = line; i >= 0; i--) {
            if (parsed.get(i) instanceof AsmLine.Directive d && d.name().equals(".loc")) {
                Matcher m = LOC.matcher(d.arguments());
                if (m.matches()) return "\t" + LOC_MARK + m.group(1) + " " + m.group(2);
            }
            if (parsed.get(i) instanceof AsmLine.Label l && !l.name().startsWith(".L")) break;
        }
        return "";
    }

    private record Site(String label, String function, String end, String name, String loc) {}

    static CheckRewriter.Result withSites(List<String> lines, Edits edits) {
        List<String> out = new ArrayList<>(lines.size() + lines.size() / 8);
        List<Site> sites = new ArrayList<>();
        Map<String, String> files = new HashMap<>();
        String pendingFunction = null, function = null, functionLabel = null, functionEnd = null, loc = null;
        String stmtLoc = null;                                 // the last .loc that began a statement (is_stmt is sticky)
        boolean comdat = false, inlineAsm = false, stmt = true;
        int labels = 0;
        Map<String, String[]> open = new LinkedHashMap<>();   // function -> {start label, end label} until its .size
        for (String raw : lines) {
            AsmLine l = AsmLine.parse(raw);
            if (l instanceof AsmLine.Directive d && d.name().equals(".size")) {
                String[] labelsOf = open.remove(d.arguments().split(",")[0].strip());
                if (labelsOf != null) out.add(labelsOf[1] + ":");   // in the function's own section (hot or cold)
            }
            out.add(raw);
            switch (l) {
                case AsmLine.Directive d -> {
                    switch (d.name()) {
                        case "#APP" -> inlineAsm = true;
                        case "#NO_APP" -> inlineAsm = false;
                        case ".section" -> comdat = d.arguments().contains("comdat");
                        case ".text", ".data", ".bss" -> comdat = false;
                        case ".type" -> {
                            String[] parts = d.arguments().split(",");
                            if (parts.length == 2 && parts[1].strip().equals("@function")) pendingFunction = parts[0].strip();
                        }
                        case ".file" -> {
                            Matcher m = FILE.matcher(d.arguments());
                            if (m.matches()) files.put(m.group(1), m.group(3) != null ? m.group(3) : m.group(2));
                        }
                        case ".loc" -> {
                            Matcher m = LOC.matcher(d.arguments());
                            String file = m.matches() ? files.get(m.group(1)) : null;
                            if (d.arguments().contains("is_stmt 0")) stmt = false;
                            else if (d.arguments().contains("is_stmt 1")) stmt = true;
                            // glibc's _FORTIFY_SOURCE wrappers are inlined into the caller: the caller's last
                            // statement line names the call (gcc interleaves the lines of its arguments' set-up)
                            if (file != null && FORTIFY_HEADER.matcher(file).find()) {
                                if (stmtLoc != null) loc = stmtLoc;
                                break;
                            }
                            if (m.matches()) loc = file != null ? file + ":" + m.group(2) : null;
                            if (stmt) stmtLoc = loc;
                        }
                        default -> { }
                    }
                }
                case AsmLine.Label x -> {
                    // the return point of an out-of-line slow path's call (outOfLine) is a call site too
                    if (RETURN_POINT.matcher(x.name()).matches() && !comdat && !inlineAsm && function != null)
                        sites.add(new Site(x.name(), functionLabel, functionEnd, function, loc));
                    if (x.name().equals(pendingFunction)) {
                        function = x.name();
                        functionEnd = ".Lmtc_e" + labels;
                        functionLabel = ".Lmtc_f" + labels++;
                        out.add(functionLabel + ":");
                        open.put(function, new String[] {functionLabel, functionEnd});
                        pendingFunction = null;
                    }
                }
                case AsmLine.Instruction in -> {
                    if (in.mnemonic().startsWith("call") && !comdat && !inlineAsm && function != null) {
                        String label = ".Lmtc_r" + labels++;
                        out.add(label + ":");
                        String at = loc;
                        int mark = raw.indexOf(LOC_MARK);
                        if (mark >= 0) {
                            String[] fl = raw.substring(mark + LOC_MARK.length()).strip().split(" ");
                            at = files.containsKey(fl[0]) ? files.get(fl[0]) + ":" + fl[1] : at;
                        }
                        sites.add(new Site(label, functionLabel, functionEnd, function, at));
                    }
                }
                case AsmLine.Other o -> { }
            }
        }
        // a function whose .size never came gets an empty extent: its calls are still named by their sites
        open.values().forEach(se -> out.add("\t.set\t" + se[1] + ", " + se[0]));
        table(out, sites, edits);
        return new CheckRewriter.Result(out, edits.checks, edits.hoisted, edits.merged, edits.ranges, edits.loops, sites.size(), edits.bounded);
    }

    private static void table(List<String> out, List<Site> sites, Edits e) {
        Map<String, String> strings = new LinkedHashMap<>();
        out.add("\t.section\t.data.rel.ro.local,\"aw\"");
        out.add("\t.align 8");
        out.add(".Lmtc_table:");
        int kept = e.checks - e.hoisted - e.merged - e.bounded;
        // version 1 has no field for the checks proven in bounds: they count as removed with the block rule's
        out.add("\t.long\t1, " + sites.size() + ", " + e.checks + ", " + kept + ", " + (e.merged + e.bounded) + ", " + e.hoisted + ", "
                + e.ranges + ", " + e.loops);
        for (Site s : sites) {
            String name = strings.computeIfAbsent(s.name(), k -> ".Lmtc_s" + strings.size());
            String loc = s.loc() == null ? "0" : strings.computeIfAbsent(s.loc(), k -> ".Lmtc_s" + strings.size());
            out.add("\t.quad\t" + s.label() + ", " + s.function() + ", " + s.end() + ", " + name + ", " + loc);
        }
        out.add("\t.section\t.rodata");
        out.addAll(e.data);
        strings.forEach((text, label) -> out.add(label + ":\n\t.string\t\"" + text + "\"")); // names as the assembly spelled them
        out.add("\t.text");
        out.add(".Lmtc_ctor:");
        out.add("\tleaq\t.Lmtc_table(%rip), %rdi");
        out.add("\tjmp\t__memtrace_check_sites@PLT");
        out.add("\t.section\t.init_array,\"aw\"");
        out.add("\t.align 8");
        out.add("\t.quad\t.Lmtc_ctor");
    }
}
