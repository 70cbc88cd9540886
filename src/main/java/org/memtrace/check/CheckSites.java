package org.memtrace.check;

import java.util.ArrayDeque;
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
 * {@code .type}, {@code .size}, {@code .file} and {@code .loc} directives. A call in a comdat group's section
 * (C++ templates, in-class methods, their {@code .text.unlikely} parts) goes to a table of its own in that
 * group, registered by a constructor of that group: the linker keeps or drops the group whole, so no kept
 * section ever points into a dropped copy.
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

    /**
     * The comdat group of the section being assembled ("" outside one), followed through {@code .section},
     * {@code .text}/{@code .data}/{@code .bss}, {@code .previous} and {@code .pushsection}/{@code .popsection}.
     */
    static final class Groups {
        private final ArrayDeque<String[]> stack = new ArrayDeque<>();   // {current, previous} of each push
        private String current = "", previous = "";

        void on(AsmLine.Directive d) {
            switch (d.name()) {
                case ".section", ".pushsection" -> {
                    if (d.name().equals(".pushsection")) stack.push(new String[] {current, previous});
                    previous = current;
                    current = groupOf(d.arguments());
                }
                case ".text", ".data", ".bss" -> { previous = current; current = ""; }
                case ".previous" -> { String c = current; current = previous; previous = c; }
                case ".popsection" -> {
                    String[] top = stack.poll();
                    if (top != null) { current = top[0]; previous = top[1]; }
                }
                default -> { }
            }
        }

        /** "name,\"axG\",@progbits,group,comdat" (an entity size may come before the group): the group, else "". */
        static String groupOf(String arguments) {
            String[] f = arguments.split(",");
            if (f.length < 5 || !f[f.length - 1].strip().equals("comdat") || !f[1].contains("G")) return "";
            return f[f.length - 2].strip();
        }
    }

    static CheckRewriter.Result withSites(List<String> lines, Edits edits) {
        List<String> out = new ArrayList<>(lines.size() + lines.size() / 8);
        Map<String, List<Site>> sites = new LinkedHashMap<>();   // comdat group ("" none) -> its calls
        sites.put("", new ArrayList<>());
        Map<String, String> files = new HashMap<>();
        String pendingFunction = null, function = null, functionLabel = null, functionEnd = null, loc = null;
        String stmtLoc = null;                                 // the last .loc that began a statement (is_stmt is sticky)
        Groups groups = new Groups();
        String functionGroup = null;                           // the comdat group of function's section ("" none)
        boolean inlineAsm = false, stmt = true;
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
                        case ".section", ".pushsection", ".popsection", ".previous", ".text", ".data", ".bss" -> groups.on(d);
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
                    if (RETURN_POINT.matcher(x.name()).matches() && !inlineAsm && groups.current.equals(functionGroup))
                        sites.computeIfAbsent(functionGroup, g -> new ArrayList<>()).add(new Site(x.name(), functionLabel, functionEnd, function, loc));
                    if (x.name().equals(pendingFunction)) {
                        function = x.name();
                        functionGroup = groups.current;
                        functionEnd = ".Lmtc_e" + labels;
                        functionLabel = ".Lmtc_f" + labels++;
                        out.add(functionLabel + ":");
                        open.put(function, new String[] {functionLabel, functionEnd});
                        pendingFunction = null;
                    }
                }
                case AsmLine.Instruction in -> {
                    // a call outside its function's group (code after a comdat function's .size) gets no site:
                    // its entry would point from one group into another that the linker may drop
                    if (in.mnemonic().startsWith("call") && !inlineAsm && groups.current.equals(functionGroup)) {
                        String label = ".Lmtc_r" + labels++;
                        out.add(label + ":");
                        String at = loc;
                        int mark = raw.indexOf(LOC_MARK);
                        if (mark >= 0) {
                            String[] fl = raw.substring(mark + LOC_MARK.length()).strip().split(" ");
                            at = files.containsKey(fl[0]) ? files.get(fl[0]) + ":" + fl[1] : at;
                        }
                        sites.computeIfAbsent(functionGroup, g -> new ArrayList<>()).add(new Site(label, functionLabel, functionEnd, function, at));
                    }
                }
                case AsmLine.Other o -> { }
            }
        }
        // a function whose .size never came gets an empty extent: its calls are still named by their sites
        open.values().forEach(se -> out.add("\t.set\t" + se[1] + ", " + se[0]));
        table(out, sites, edits);
        int count = sites.values().stream().mapToInt(List::size).sum();
        return new CheckRewriter.Result(out, edits.checks, edits.hoisted, edits.merged, edits.ranges, edits.loops, count, edits.bounded);
    }

    private static void table(List<String> out, Map<String, List<Site>> sites, Edits e) {
        Map<String, String> strings = new LinkedHashMap<>();
        int kept = e.checks - e.hoisted - e.merged - e.bounded;
        // version 1 has no field for the checks proven in bounds: they count as removed with the block rule's
        String counts = e.checks + ", " + kept + ", " + (e.merged + e.bounded) + ", " + e.hoisted + ", " + e.ranges + ", " + e.loops;
        out.add("\t.section\t.data.rel.ro.local,\"aw\"");
        entries(out, ".Lmtc_table", sites.get(""), counts, strings);
        int n = 0;
        for (var group : sites.entrySet()) {
            if (group.getKey().isEmpty()) continue;
            // the group's own table, constructor and .init_array slot: kept or dropped with the group's code;
            // the object's counts stay in the object's table (a dropped copy's checks were still made)
            String g = group.getKey(), table = ".Lmtc_gt" + n, ctor = ".Lmtc_gc" + n++;
            out.add("\t.section\t.data.rel.ro.local.mtc." + g + ",\"awG\",@progbits," + g + ",comdat");
            entries(out, table, group.getValue(), "0, 0, 0, 0, 0, 0", strings);
            out.add("\t.section\t.text.mtc." + g + ",\"axG\",@progbits," + g + ",comdat");
            constructor(out, ctor, table);
            out.add("\t.section\t.init_array,\"awG\",@init_array," + g + ",comdat");
            out.add("\t.align 8");
            out.add("\t.quad\t" + ctor);
        }
        out.add("\t.section\t.rodata");
        out.addAll(e.data);
        strings.forEach((text, label) -> out.add(label + ":\n\t.string\t\"" + text + "\"")); // names as the assembly spelled them
        out.add("\t.text");
        constructor(out, ".Lmtc_ctor", ".Lmtc_table");
        out.add("\t.section\t.init_array,\"aw\"");
        out.add("\t.align 8");
        out.add("\t.quad\t.Lmtc_ctor");
    }

    private static void entries(List<String> out, String table, List<Site> sites, String counts, Map<String, String> strings) {
        out.add("\t.align 8");
        out.add(table + ":");
        out.add("\t.long\t1, " + sites.size() + ", " + counts);
        for (Site s : sites) {
            String name = strings.computeIfAbsent(s.name(), k -> ".Lmtc_s" + strings.size());
            String loc = s.loc() == null ? "0" : strings.computeIfAbsent(s.loc(), k -> ".Lmtc_s" + strings.size());
            out.add("\t.quad\t" + s.label() + ", " + s.function() + ", " + s.end() + ", " + name + ", " + loc);
        }
    }

    private static void constructor(List<String> out, String label, String table) {
        out.add(label + ":");
        out.add("\tleaq\t" + table + "(%rip), %rdi");
        out.add("\tjmp\t__memtrace_check_sites@PLT");
    }
}
