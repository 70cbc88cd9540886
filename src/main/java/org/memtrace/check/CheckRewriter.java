package org.memtrace.check;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The assembly step of {@code memtrace cc --check}: gcc compiled the file with {@code -fsanitize=address} and
 * outline checks, so every checked access is a {@code call __asan_*} before it. This pass (1) prunes: the
 * loop rule ({@link LoopHoist}) and then the block rule ({@link BlockMerge}), unless pruning is off; (2) puts a
 * label after every call and a table of them in the object (section {@code .data.rel.ro.local}, registered by
 * a constructor with {@code __memtrace_check_sites}), so that the runtime names a call site as
 * {@code function+offset} and {@code file:line} without reading the binary; the table's header carries the
 * counts of checks gcc made and the pruner removed, which the summary adds up; the block rule's descriptors
 * follow in {@code .rodata}.
 *
 * <p>Table layout (version 1): eight 32-bit words {@code version nsites checks kept merged hoisted ranges loops},
 * then per site five 64-bit words {@code return-address function-start function-end name loc} (name and loc point at
 * NUL-terminated strings; loc is {@code file:line} or 0). Calls in comdat sections (C++ inline functions and
 * templates) and inside inline assembly get no entry: the linker may drop a comdat copy, and a table entry
 * pointing into it would then not link.
 */
public final class CheckRewriter {
    private static final Pattern JUMP_LABEL = Pattern.compile("\\.L\\d+\\b");
    private static final Pattern FILE = Pattern.compile("^(\\d+)\\s+\"((?:[^\"\\\\]|\\\\.)*)\"(?:\\s+\"((?:[^\"\\\\]|\\\\.)*)\")?.*");
    private static final Pattern LOC = Pattern.compile("^(\\d+)\\s+(\\d+).*");
    private static final String LOC_MARK = "# memtrace-check-loc ";
    /** The labels gcc's -g puts for the debug info's locations and scopes: no jump leads to them. */
    /** The return point of an out-of-line slow path ({@link #outOfLine}): a call site. */
    private static final Pattern RETURN_POINT = Pattern.compile("\\.Lmtc_q\\d+");
    private static final Pattern DEBUG_LABEL = Pattern.compile("\\.L(VL|BB|BE|BI|VU)\\d+");
    /**
     * The displacement of the {@code nopl} after a slow call whose run has checks left, plus their number: the
     * runtime reads it at the call's return address and takes them back off the count when that check stops the
     * program (check_shadow.c, rest_of_run). Executed on slow paths only.
     */
    private static final int REST_MARK = 0x6d740000;
    /** A heap block's redzones: at least 32 bytes on the right and 64 on the left (agent/check/check_heap.c). */
    private static final int INTO_REACH = 96;
    /** A live block's header magic (check.h's MC_LIVE): at 64 bytes below the block, its size at 56. */
    private static final int MC_LIVE = 0x4d544c56;
    /** glibc's inline wrappers of _FORTIFY_SOURCE (memcpy calling __memcpy_chk): the line of their caller is kept. */
    private static final Pattern FORTIFY_HEADER = Pattern.compile("/bits/(string_fortified|strings_fortified|stdio2|wchar2|unistd|socket2)\\.h$");

    /** What the rewrite did: the new text and the counts of its table. */
    public record Result(List<String> lines, int checks, int hoisted, int merged, int ranges, int loops, int sites, int bounded) {}

    private CheckRewriter() {}

    public static Result rewrite(List<String> lines, boolean prune) {
        return rewrite(lines, null, prune);
    }

    /**
     * @param plain the same file compiled with gcc's layout but no access checks ({@link PlainBodies}), or null
     */
    public static Result rewrite(List<String> lines, List<String> plain, boolean prune) {
        PlainBodies.Swap swap = prune && plain != null ? PlainBodies.swap(lines, plain) : null;
        if (swap != null) lines = swap.lines();
        List<AsmLine> parsed = lines.stream().map(AsmLine::parse).toList();
        Edits edits = new Edits();
        for (AsmLine l : parsed) if (CheckCall.of(l) != null) edits.checks++;
        if (swap != null) {
            // gcc's checks of the replaced bodies count as removed by loop checks, less the single checks kept
            edits.checks += swap.gccChecks();
            edits.hoisted += Math.max(0, swap.gccChecks() - swap.singles());
            edits.loops += swap.ranges() + swap.singles();
        }
        if (prune) {
            LoopHoist.apply(lines, parsed, references(lines, parsed), edits);
            edits.bounded = InBounds.apply(parsed, edits);
            BlockMerge.apply(parsed, edits);
        }
        List<String> pruned = inline(edits.apply(lines));
        return withSites(pruned, edits);
    }

    /**
     * Every remaining check of 1 to 8 bytes becomes an inline test of its shadow byte, calling the runtime
     * only when that byte is not 0 or the access crosses into the next granule. The registers it uses (%rax,
     * %rcx) and the flags are the call's to clobber: gcc planned a call there. The checks are counted in the
     * thread's {@code __memtrace_check_inline} once per run ({@link #runs}), not each: one {@code addq} at a run's
     * first check stands for all of them (a chain of increments of one memory word was 8 % of bzip2's run).
     * An addressable indexed access outside loops whose base
     * {@link IndexBase} finds is also tested against its base's heap block when it lies 96 bytes or more from
     * that base ({@code __memtrace_check_index}: an index that carried it over both redzones into another block).
     */
    private static List<String> inline(List<String> lines) {
        List<String> out = new ArrayList<>(lines.size() + lines.size() / 2);
        List<AsmLine> parsed = lines.stream().map(AsmLine::parse).toList();
        boolean[] inLoop = IndexBase.inLoops(parsed);
        int[] run = runs(parsed);
        int n = 0, rest = 0;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            CheckCall c = inlined(parsed.get(i));
            if (c == null) {
                out.add(line);
                continue;
            }
            IndexBase.Base base = inLoop[i] ? null : IndexBase.of(parsed, i);
            String slow = ".Lmtc_x" + n, done = ".Lmtc_d" + n++;
            if (base != null) out.addAll(base.setup());
            if (run[i] > 0) {
                out.add("\tmovq\t__memtrace_check_inline@gottpoff(%rip), %rcx");
                out.add(run[i] == 1 ? "\tincq\t%fs:(%rcx)" : "\taddq\t$" + run[i] + ", %fs:(%rcx)");
                rest = run[i];
            }
            String restMark = --rest > 0 ? "\tnopl\t" + (REST_MARK + rest) + "(%rax)" : null;
            String callee = "__memtrace_slow_" + (c.store() ? "store" : "load") + c.size() + "@PLT";
            if (base == null) {
                out.addAll(outOfLine(c.size(), n - 1, callee, restMark));
                continue;
            }
            String fine = ".Lmtc_i" + (n - 1);
            out.addAll(firstTest(c.size()));
            out.add("\tje\t" + fine);
            out.addAll(exactTests(c.size(), fine, slow));
            out.add(slow + ":");
            out.add("\tcall\t" + callee);
            if (restMark != null) out.add(restMark);
            {
                // addressable: an index under INTO_REACH bytes from its base cannot have crossed both redzones
                out.add("\tjmp\t" + done);
                out.add(fine + ":");
                out.add("\tmovq\t%rdi, %rax");
                out.add("\tsubq\t%rsi, %rax");
                out.add("\taddq\t$" + INTO_REACH + ", %rax");
                out.add("\tcmpq\t$" + 2 * INTO_REACH + ", %rax");
                out.add("\tjb\t" + done);
                out.addAll(liveBlockHolds(c.size(), done, ".Lmtc_xi" + (n - 1)));
                out.add("\tmovl\t$" + (c.size() | (c.store() ? 1 << 8 : 0) | (base.either() ? 1 << 9 : 0)) + ", %edx");
                out.add("\tcall\t__memtrace_check_index@PLT");
                if (restMark != null) out.add(restMark);
            }
            out.add(done + ":");
        }
        return out;
    }

    /**
     * A kept check of 1 to 8 bytes with no index test: its first compare in line, falling through when it is 0
     * (the common case), and everything else out of line, in the section's subsection 1 (after all of its
     * functions' code): the exact tests, and the runtime entered as if called from the line after the compare
     * ({@code leaq ret(%rip), %rcx; pushq %rcx; jmp slow}: the same stack alignment as gcc's call). So the fast
     * path takes no branch (jumping over the slow code in line was 9 % of sqlite3's checked run), and the slow
     * call's return address ({@code .Lmtc_qN}, a site of the table, followed by the run's rest mark, which the
     * fast path executes as a nop) is where the check stands: its function, line, inlined frames (DWARF) and
     * unwind rules are the check's own. The out-of-line instructions themselves have no unwind rules (a debugger
     * stopped on one cannot walk back); a return that no call pushed would trip a CET shadow stack, which the
     * process enables only when every module is marked for it, and the check runtime is not.
     */
    private static List<String> outOfLine(int size, int n, String callee, String restMark) {
        String away = ".Lmtc_o" + n, back = ".Lmtc_q" + n, slow = ".Lmtc_x" + n;
        List<String> out = new ArrayList<>(firstTest(size));
        out.add("\tjne\t" + away);
        out.add(back + ":");
        if (restMark != null) out.add(restMark);
        out.add("\t.subsection\t1");
        out.add(away + ":");
        out.addAll(exactTests(size, back, slow));
        out.add(slow + ":");
        out.add("\tleaq\t" + back + "(%rip), %rcx");
        out.add("\tpushq\t%rcx");
        out.add("\tjmp\t" + callee);
        out.add("\t.subsection\t0");
        return out;
    }

    /**
     * The first compare of the inline test of an access of 1, 2, 4 or 8 bytes at %rdi: zero when the access may
     * be made. The shadow bytes of the access's granule and (for more than one byte) of the next one are both 0,
     * so every byte is addressable wherever in the granule it starts (ASan's test reads only the first granule
     * and misses an unaligned access that crosses into the next). One byte: its shadow byte, kept in %ecx.
     */
    static List<String> firstTest(int size) {
        List<String> out = new ArrayList<>(List.of("\tmovq\t%rdi, %rax", "\tshrq\t$3, %rax"));
        if (size == 1) {
            out.add("\tmovsbl\t2147450880(%rax), %ecx");
            out.add("\ttestl\t%ecx, %ecx");
        } else {
            out.add("\tcmpw\t$0, 2147450880(%rax)");
        }
        return out;
    }

    /**
     * The exact tests after a first compare that was not 0, jumping to {@code fine} when the access may be made
     * and to {@code slow}, the runtime's exact test, which follows them, otherwise: an 8-byte access that
     * starts its granule needs that granule's byte 0 (the next granule is a block's redzone after its last field);
     * a shorter one that stays in its granule, that granule's byte 0 or k with its last byte under k (a partial
     * last granule: a block of 20 bytes' bytes 16..19). Anything else (a poisoned byte, an access across into a
     * partial or poisoned granule) is the runtime's. Before, a 2- or 4-byte access tested its crossing with three
     * more instructions on the fast path and every access to a partial granule called the runtime (2-3 % of
     * sqlite3's checked run). %rax, %rcx and the flags are the call's to clobber.
     */
    static List<String> exactTests(int size, String fine, String slow) {
        List<String> out = new ArrayList<>();
        if (size == 1) {
            out.add("\tmovl\t%edi, %eax");
            out.add("\tandl\t$7, %eax");
            out.add("\tcmpl\t%ecx, %eax");
            out.add("\tjl\t" + fine);
            return out;
        }
        if (size == 8) {
            out.add("\ttestb\t$7, %dil");
            out.add("\tjne\t" + slow);
            out.add("\tcmpb\t$0, 2147450880(%rax)");
            out.add("\tje\t" + fine);
            return out;
        }
        out.add("\tmovsbl\t2147450880(%rax), %ecx");
        out.add("\tmovl\t%edi, %eax");
        out.add("\tandl\t$7, %eax");
        out.add("\taddl\t$" + (size - 1) + ", %eax");
        out.add("\tcmpl\t$7, %eax");
        out.add("\tja\t" + slow);
        out.add("\ttestl\t%ecx, %ecx");
        out.add("\tje\t" + fine);
        out.add("\tcmpl\t%ecx, %eax");
        out.add("\tjl\t" + fine);
        return out;
    }

    /**
     * The index test's fast path: the base (%rsi) starts a live heap block that holds the access's bytes (%rdi):
     * the granule before it is a heap block's left redzone (shadow 0xfa, so the base is 8-aligned and the block's
     * header, {@code struct mc_block} of check.h, lies in the 64 bytes below it), the header's magic is
     * {@code MC_LIVE} and {@code addr - base + size <= size} of the block. Otherwise the runtime looks: a base inside
     * a block, a quarantined one, the other term of an {@code either} base (mainGtU's {@code block[i1]}: 2.4 % of
     * bzip2's checked run in that call). A base at 2^47 or above (an index taken for the base) has no shadow.
     */
    private static List<String> liveBlockHolds(int size, String done, String slow) {
        return List.of(
                "\tleaq\t-1(%rsi), %rax",
                "\tmovq\t%rax, %rcx",
                "\tshrq\t$47, %rcx",
                "\tjne\t" + slow,
                "\tshrq\t$3, %rax",
                "\tcmpb\t$-6, 2147450880(%rax)",
                "\tjne\t" + slow,
                "\tcmpl\t$" + MC_LIVE + ", -64(%rsi)",
                "\tjne\t" + slow,
                "\tmovq\t%rdi, %rax",
                "\tsubq\t%rsi, %rax",
                "\taddq\t$" + size + ", %rax",
                "\tcmpq\t-56(%rsi), %rax",
                "\tjbe\t" + done,
                slow + ":");
    }

    /** The check a line calls when {@link #inline} tests it inline (1 to 8 bytes, an aborting check), else null. */
    private static CheckCall inlined(AsmLine line) {
        CheckCall c = CheckCall.of(line);
        if (c == null || c.size() == 0 || c.size() > 8) return null;
        return ((AsmLine.Instruction) line).operands().getFirst().contains("noabort") ? null : c;
    }

    /**
     * Runs of inlined checks: checks with no label (but debug info's), jump, return, other call, section change or inline assembly
     * between them, so that whoever executes a run's first check executes all of its checks, unless a check stops
     * the program or an access faults in between (check_shadow.c takes a stopping check's rest back off). At a
     * run's first check the number of checks of the run, 0 at the others.
     */
    static int[] runs(List<AsmLine> parsed) {
        int[] run = new int[parsed.size()];
        int first = -1;
        for (int i = 0; i < parsed.size(); i++) {
            AsmLine l = parsed.get(i);
            if (inlined(l) != null) {
                if (first < 0) first = i;
                run[first]++;
            } else if (endsRun(l)) {
                first = -1;
            }
        }
        return run;
    }

    private static boolean endsRun(AsmLine l) {
        return switch (l) {
            case AsmLine.Label x -> !DEBUG_LABEL.matcher(x.name()).matches();
            case AsmLine.Directive d -> !d.name().equals(".loc") && !d.name().startsWith(".cfi_");
            case AsmLine.Instruction in -> {
                String m = in.mnemonic();
                yield in.isJump() || m.startsWith("call") || m.startsWith("ret") || m.startsWith("loop") || m.startsWith("sys")
                        || m.startsWith("int") || m.startsWith("xbegin") || m.startsWith("xabort") || m.equals("ud2")
                        || m.equals("hlt") || m.startsWith("lret") || m.startsWith("iret");
            }
            case AsmLine.Other o -> false;
        };
    }

    /** How often each jump label is named outside its own definition. */
    private static Map<String, Integer> references(List<String> lines, List<AsmLine> parsed) {
        Map<String, Integer> count = new HashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            if (parsed.get(i) instanceof AsmLine.Label) continue;
            Matcher m = JUMP_LABEL.matcher(lines.get(i));
            while (m.find()) count.merge(m.group(), 1, Integer::sum);
        }
        return count;
    }

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

    private static Result withSites(List<String> lines, Edits edits) {
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
        return new Result(out, edits.checks, edits.hoisted, edits.merged, edits.ranges, edits.loops, sites.size(), edits.bounded);
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
