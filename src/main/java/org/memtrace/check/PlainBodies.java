package org.memtrace.check;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Vectorised loops under {@code memtrace cc --check}: gcc inserts its address-sanitizer checks before it
 * optimises loops, and a check "clobbers memory", so a checked loop is never vectorised. The gcc wrapper also
 * compiles each file with gcc's memory layout but no access checks ({@code --param asan-instrument-reads=0
 * --param asan-instrument-writes=0}: the same globals with redzones, the same frames), where the loops are
 * vectorised. Every function of the checked file keeps exactly one of its two bodies: the unchecked one when
 * {@link PlainCover} can check its every access itself (a range at each innermost loop's entry, one check per
 * access elsewhere) with at least one loop range, gcc's checked body has no frame of redzoned locals to lay out
 * (no address-taken local array, no alloca, no {@code __asan_handle_no_return}) and calls something (its callers
 * in this file may rely, by -fipa-ra, on the registers a callee leaves unchanged), the function is no clone
 * ({@code .constprop}, {@code .isra}: the two compiles may change their arguments differently) and every
 * function of this file it calls runs its unchecked body too; gcc's body otherwise.
 *
 * <p>The unchecked body's {@code .L} labels get the prefix {@code .Lmtp} (the two files number theirs alike), its
 * {@code .loc} lines the checked file's file numbers (without views), and the constants it reads ({@code .LC})
 * are copied to the end of the file. The checked body's own labels that its debug information names keep
 * existing: {@code .LFB}/{@code .LFE} at the new body's start and end, every other one ({@code .LVL},
 * {@code .LBB}...) at the function's start, its location views as 0: line numbers stay exact, the locations
 * of the function's variables and lexical blocks are lost (a debugger shows them as optimised out). A function
 * with a cold part ({@code f.cold}), a jump table or any section switch in either body, or a global the checked
 * file does not define, keeps gcc's body.
 */
final class PlainBodies {
    private static final Pattern LOCAL = Pattern.compile("(?<![\\w.$])\\.L(?=[A-Za-z0-9_])");
    private static final Pattern CONSTANT = Pattern.compile("\\.LC\\d+");
    private static final Pattern VIEW = Pattern.compile("\\s+view\\s+(\\S+)");
    private static final Pattern FILE = Pattern.compile("^(\\d+)\\s+(\".*)$");
    private static final Pattern LOC = Pattern.compile("^(\\s*\\.loc\\s+)(\\d+)(\\s.*)$");
    private static final Pattern WORD = Pattern.compile("[A-Za-z_.$][\\w.$]*");
    private static final Set<String> DATA = Set.of(".long", ".quad", ".byte", ".value", ".word", ".short", ".string",
            ".ascii", ".zero", ".octa", ".float", ".double", ".4byte", ".8byte", ".2byte");

    /**
     * The checked file with the bodies swapped.
     *
     * @param gccChecks gcc's checks in the bodies that were replaced (removed, as the summary counts them)
     * @param ranges    range checks added at loop entries
     * @param singles   single-access checks added
     * @param functions the functions that now run their unchecked body
     */
    record Swap(List<String> lines, int gccChecks, int ranges, int singles, List<String> functions) {}

    private record Region(int start, int end) {}

    private PlainBodies() {}

    private record Candidate(Region region, List<String> gccBody, PlainCover.Cover cover, Set<String> callees) {}

    static Swap swap(List<String> checked, List<String> plain) {
        Map<String, Region> ours = functions(checked), theirs = functions(plain);
        Map<String, Long> sizes = sizes(checked);
        Set<String> definedChecked = labels(checked), definedPlain = labels(plain);
        Map<String, String> files = fileMap(checked, plain);
        Map<String, Candidate> candidates = new LinkedHashMap<>();
        for (var e : ours.entrySet()) {
            String f = e.getKey();
            Region mine = e.getValue(), other = theirs.get(f);
            // a clone (f.constprop.0, f.isra.0, f.part.0) may take its arguments differently in the two compiles
            if (other == null || f.contains(".") || ours.containsKey(f + ".cold") || theirs.containsKey(f + ".cold")) continue;
            List<String> gccBody = checked.subList(mine.start() + 1, mine.end());
            List<String> body = plain.subList(other.start() + 1, other.end());
            if (!layoutFree(gccBody) || !layoutFree(body) || body.stream().anyMatch(l -> l.contains("__asan_"))) continue;
            // gcc's body calls (its checks at least): its callers assume every caller-saved register changes
            // (-fipa-ra lets a caller keep values across a local callee that does not change them)
            if (gccBody.stream().noneMatch(l -> AsmLine.parse(l) instanceof AsmLine.Instruction in && in.mnemonic().startsWith("call"))) {
                continue;
            }
            List<String> remapped = remap(body, files);
            if (remapped == null || !symbolsKnown(remapped, definedChecked, definedPlain)) continue;
            PlainCover.Cover cover = PlainCover.of(remapped, sizes);
            // no loop range: nothing vectorised to gain, and gcc's inline checks cost less than single ones
            if (cover == null || cover.ranges() == 0) continue;
            candidates.put(f, new Candidate(mine, gccBody, cover, callees(remapped, definedPlain)));
        }
        // a swapped body calls local functions only if they run their unchecked body too: -fipa-ra made it
        // rely on what the unchecked callee leaves unchanged
        boolean changed = true;
        while (changed) {
            changed = candidates.entrySet().removeIf(e -> !candidates.keySet().containsAll(e.getValue().callees()));
        }
        if (candidates.isEmpty()) return new Swap(checked, 0, 0, 0, List.of());
        Map<Integer, List<String>> replace = new HashMap<>();
        Map<Integer, Integer> skipTo = new HashMap<>();
        Set<String> constants = new LinkedHashSet<>();
        int gccChecks = 0, ranges = 0, singles = 0;
        for (var e : candidates.entrySet()) {
            Candidate c = e.getValue();
            for (String l : c.cover().lines()) {
                Matcher m = CONSTANT.matcher(l);
                while (m.find()) constants.add(m.group());
            }
            replace.put(c.region().start(), replacement(e.getKey(), c.gccBody(), c.cover().lines()));
            skipTo.put(c.region().start(), c.region().end());
            for (String l : c.gccBody()) if (CheckCall.of(AsmLine.parse(l)) != null) gccChecks++;
            ranges += c.cover().ranges();
            singles += c.cover().singles();
        }
        List<String> out = new ArrayList<>(checked.size() + 64);
        for (int i = 0; i < checked.size(); i++) {
            List<String> r = replace.get(i);
            if (r == null) {
                out.add(checked.get(i));
                continue;
            }
            out.add(checked.get(i));                     // the function's label
            out.addAll(r);
            i = skipTo.get(i) - 1;                       // the .size line follows as it was
        }
        List<String> data = constants(plain, constants);
        if (data == null) return new Swap(checked, 0, 0, 0, List.of());
        out.addAll(data);
        return new Swap(out, gccChecks, ranges, singles, List.copyOf(candidates.keySet()));
    }

    /** The functions of this file a body calls or jumps to (by name, {@code @PLT} or not). */
    private static Set<String> callees(List<String> body, Set<String> defined) {
        Set<String> out = new HashSet<>();
        for (String raw : body) {
            if (AsmLine.parse(raw) instanceof AsmLine.Instruction in && (in.mnemonic().startsWith("call") || in.isJump())
                    && in.operands().size() == 1) {
                String target = in.operands().getFirst().replaceAll("@\\w+$", "");
                if (defined.contains(target)) out.add(target);
            }
        }
        return out;
    }

    /** Function name to the lines of its label and its {@code .size}. */
    private static Map<String, Region> functions(List<String> lines) {
        Map<String, Region> out = new LinkedHashMap<>();
        Map<String, Integer> open = new HashMap<>();
        String pending = null;
        for (int i = 0; i < lines.size(); i++) {
            AsmLine l = AsmLine.parse(lines.get(i));
            if (l instanceof AsmLine.Directive d && d.name().equals(".type")) {
                String[] parts = d.arguments().split(",");
                if (parts.length == 2 && parts[1].strip().equals("@function")) pending = parts[0].strip();
            } else if (l instanceof AsmLine.Label x && x.name().equals(pending)) {
                open.put(pending, i);
                pending = null;
            } else if (l instanceof AsmLine.Directive d && d.name().equals(".size")) {
                String[] parts = d.arguments().split(",");
                String name = parts[0].strip();
                Integer start = open.remove(name);
                if (start != null && parts.length == 2 && parts[1].strip().equals(".-" + name)) out.put(name, new Region(start, i));
            }
        }
        return out;
    }

    /** Sizes of the objects the file defines. */
    private static Map<String, Long> sizes(List<String> lines) {
        Map<String, Long> out = new HashMap<>();
        for (String raw : lines) {
            if (!(AsmLine.parse(raw) instanceof AsmLine.Directive d)) continue;
            String[] parts = d.arguments().split(",");
            try {
                if (d.name().equals(".size") && parts.length == 2) out.put(parts[0].strip(), Long.parseLong(parts[1].strip()));
                if ((d.name().equals(".comm") || d.name().equals(".lcomm")) && parts.length >= 2) {
                    out.put(parts[0].strip(), Long.parseLong(parts[1].strip()));
                }
            } catch (NumberFormatException e) {
                // .size f, .-f: a function
            }
        }
        return out;
    }

    private static Set<String> labels(List<String> lines) {
        Set<String> out = new HashSet<>();
        for (String raw : lines) if (AsmLine.parse(raw) instanceof AsmLine.Label x && !x.name().startsWith(".L")) out.add(x.name());
        return out;
    }

    /** No redzoned frame, no shadow written, no section switch, no inline assembly. */
    private static boolean layoutFree(List<String> body) {
        for (String raw : body) {
            if (raw.contains("2147450880") || raw.contains("#APP")) return false;
            if (raw.contains("__asan_") && CheckCall.of(AsmLine.parse(raw)) == null) return false;
            if (AsmLine.parse(raw) instanceof AsmLine.Directive d && (d.name().startsWith(".section") || d.name().equals(".text")
                    || d.name().equals(".data") || d.name().equals(".bss") || d.name().equals(".previous")
                    || d.name().equals(".pushsection"))) return false;
        }
        return true;
    }

    /** The unchecked file's numbers of {@code .file} to the checked file's, by name. */
    private static Map<String, String> fileMap(List<String> checked, List<String> plain) {
        Map<String, String> byName = new HashMap<>(), out = new HashMap<>();
        for (String raw : checked) {
            if (AsmLine.parse(raw) instanceof AsmLine.Directive d && d.name().equals(".file")) {
                Matcher m = FILE.matcher(d.arguments());
                if (m.matches()) byName.put(m.group(2), m.group(1));
            }
        }
        for (String raw : plain) {
            if (AsmLine.parse(raw) instanceof AsmLine.Directive d && d.name().equals(".file")) {
                Matcher m = FILE.matcher(d.arguments());
                if (m.matches() && byName.containsKey(m.group(2))) out.put(m.group(1), byName.get(m.group(2)));
            }
        }
        return out;
    }

    /** The body's .loc lines in the checked file's numbers, views dropped; null when a file has no number there. */
    private static List<String> remap(List<String> body, Map<String, String> files) {
        List<String> out = new ArrayList<>(body.size());
        for (String raw : body) {
            if (AsmLine.parse(raw) instanceof AsmLine.Directive d && d.name().equals(".file")) {
                Matcher f = FILE.matcher(d.arguments());
                if (!f.matches() || files.get(f.group(1)) == null) return null;
                out.add("\t.file " + files.get(f.group(1)) + " " + f.group(2));   // the checked file's number, same name
                continue;
            }
            Matcher m = LOC.matcher(raw);
            if (m.matches()) {
                String n = files.get(m.group(2));
                if (n == null) return null;
                raw = m.group(1) + n + VIEW.matcher(m.group(3)).replaceAll("");
            }
            out.add(raw);
        }
        return out;
    }

    /** Every global the body names is defined in the checked file or in neither (external): no renamed static. */
    private static boolean symbolsKnown(List<String> body, Set<String> checked, Set<String> plain) {
        for (String raw : body) {
            if (!(AsmLine.parse(raw) instanceof AsmLine.Instruction in)) continue;
            for (String op : in.operands()) {
                Matcher m = WORD.matcher(op.replaceAll("%\\w+", "").replaceAll("@\\w+", ""));
                while (m.find()) {
                    String w = m.group();
                    if (!w.startsWith(".L") && plain.contains(w) && !checked.contains(w)) return false;
                    // a static local (buf.1) or a clone: the two compiles may number them differently
                    if (!w.startsWith(".L") && w.contains(".") && plain.contains(w)) return false;
                }
            }
        }
        return true;
    }

    /** The unchecked body under renamed labels, with the checked body's labels that debug information names. */
    private static List<String> replacement(String f, List<String> gccBody, List<String> body) {
        List<String> out = new ArrayList<>(body.size() + 32);
        String begin = null, end = null;
        List<String> orphans = new ArrayList<>();
        for (String raw : gccBody) {
            AsmLine l = AsmLine.parse(raw);
            if (l instanceof AsmLine.Label x && x.name().startsWith(".L")) {
                if (begin == null && x.name().matches("\\.LFB\\d+")) begin = x.name();
                else if (x.name().matches("\\.LFE\\d+")) end = x.name();
                else orphans.add("\t.set\t" + x.name() + ", " + f);
            }
            if (l instanceof AsmLine.Directive d && d.name().equals(".loc")) {
                Matcher v = VIEW.matcher(" " + d.arguments());
                while (v.find()) if (v.group(1).startsWith(".LVU")) orphans.add("\t.set\t" + v.group(1) + ", 0");
            }
        }
        if (begin != null) out.add(begin + ":");
        out.add("\t# memtrace check: gcc's body without its checks (vectorised loops kept), checked by memtrace");
        for (String raw : body) out.add(LOCAL.matcher(raw).replaceAll(".Lmtp"));
        if (end != null) out.add(end + ":");
        out.addAll(orphans);
        return out;
    }

    /** The constants the copied bodies read, from the unchecked file, renamed; null when one is not found. */
    private static List<String> constants(List<String> plain, Set<String> wanted) {
        List<String> out = new ArrayList<>();
        for (String c : wanted) {
            String name = c;
            int at = -1;
            for (int i = 0; i < plain.size(); i++) {
                if (AsmLine.parse(plain.get(i)) instanceof AsmLine.Label x && x.name().equals(name)) {
                    at = i;
                    break;
                }
            }
            if (at < 0) return null;
            String section = null;
            for (int i = at - 1; i >= 0 && section == null; i--) {
                if (AsmLine.parse(plain.get(i)) instanceof AsmLine.Directive d && (d.name().equals(".section")
                        || d.name().equals(".text") || d.name().equals(".data"))) section = plain.get(i);
            }
            if (section == null) return null;
            out.add(section);
            int align = at;
            while (align > 0 && AsmLine.parse(plain.get(align - 1)) instanceof AsmLine.Directive d
                    && (d.name().equals(".align") || d.name().equals(".p2align") || d.name().equals(".balign"))) align--;
            for (int i = align; i < at; i++) out.add(plain.get(i));
            out.add(LOCAL.matcher(c).replaceAll(".Lmtp") + ":");
            for (int i = at + 1; i < plain.size() && AsmLine.parse(plain.get(i)) instanceof AsmLine.Directive d
                    && DATA.contains(d.name()); i++) out.add(plain.get(i));
        }
        if (!out.isEmpty()) out.add("\t.text");
        return out;
    }
}
