package org.memtrace.check;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Whether one function of the compile without access checks (gcc's memory layout, its loops vectorised) can
 * be checked by memtrace alone, and the function with those checks ({@link PlainBodies} chooses between it and
 * gcc's checked body). Every memory operand of the body must be
 * <ul>
 * <li>a frame slot ({@code %rsp} plus a constant, or {@code %rbp} plus a constant when the function sets it up
 * as frame pointer): the function has no redzoned locals (the caller makes sure), so these are spills and
 * locals gcc would not check either;</li>
 * <li>a global plus a constant inside its {@code .size} (a constant-pool {@code .LC} label, or an undefined
 * symbol at offset 0, which gcc only reads as its declared type): what gcc itself leaves unchecked;</li>
 * <li>in an innermost loop, every iteration, at an address affine in the loop's induction registers: one {@code __memtrace_check_loop} of the loop's whole range at
 * its entry ({@link LoopHoist}'s rule, on the uninstrumented loop, without its cost rule: the runtime tests a
 * stride over 64 bytes access by access); accesses from one base less than a stride apart share one;</li>
 * <li>anywhere else outside innermost loops (an outer loop's {@code a[i][k]}): its own check, the same call with
 * a range of one access, before it.</li>
 * </ul>
 * Anything else (an access in an innermost loop that is conditional or not affine, string instructions, indirect
 * jumps and calls through memory, inline assembly, {@code %fs:} operands, an instruction whose access width it
 * does not know) keeps gcc's body: its checks are per access and correct, only slower.
 */
final class PlainCover {
    private static final Pattern JUMP_LABEL = Pattern.compile("\\.L\\d+");
    private static final Pattern RIP = Pattern.compile("^(.*)\\(%rip\\)$");
    private static final Pattern OTHER_LOCAL = Pattern.compile("(?<![\\w.$])\\.L[A-Za-z_]*\\d+\\b");
    private static final Pattern STRINGS = Pattern.compile("(movs|stos|lods|scas|cmps)[bwlq]");

    /** The body with its checks, how many range checks at loop entries and single-access checks it got. */
    record Cover(List<String> lines, int ranges, int singles) {}

    private PlainCover() {}

    /**
     * @param body  the lines between the function's label and its {@code .size}
     * @param sizes the sizes of the file's defined objects ({@code .size}, {@code .comm}); an absent one is external
     */
    static Cover of(List<String> body, Map<String, Long> sizes) {
        List<AsmLine> parsed = body.stream().map(AsmLine::parse).toList();
        Map<String, Integer> definedAt = new HashMap<>();
        Map<String, Integer> references = new HashMap<>();
        boolean framePointer = false;
        for (int i = 0; i < parsed.size(); i++) {
            AsmLine l = parsed.get(i);
            if (l instanceof AsmLine.Label x && JUMP_LABEL.matcher(x.name()).matches()) definedAt.put(x.name(), i);
            if (l instanceof AsmLine.Directive d && (d.name().equals("#APP") || d.name().startsWith(".section")
                    || d.name().equals(".text") || d.name().equals(".data") || d.name().equals(".bss")
                    || d.name().equals(".pushsection") || d.name().equals(".previous"))) return null;
            if (l instanceof AsmLine.Instruction in) {
                if (in.mnemonic().equals("movq") && in.operands().equals(List.of("%rsp", "%rbp"))) framePointer = true;
                for (String op : in.operands()) {
                    Matcher m = JUMP_LABEL.matcher(op);
                    while (m.find()) references.merge(m.group(), 1, Integer::sum);
                }
            }
        }
        // every local label the body names is its own or a constant (copied with it)
        for (String l : references.keySet()) if (!definedAt.containsKey(l)) return null;
        for (String raw : body) {
            Matcher local = OTHER_LOCAL.matcher(raw);
            while (local.find()) {
                String name = local.group();
                if (!name.matches("\\.LC\\d+") && !name.matches("\\.L(VL|VU|BB|BE|FB|FE|ASANPC)\\d+")
                        && !definedAt.containsKey(name) && !(AsmLine.parse(raw) instanceof AsmLine.Label)) return null;
            }
        }
        // loops: a label and the last jump back to it; innermost: no other loop inside
        List<int[]> loops = new ArrayList<>();
        for (int i = 0; i < parsed.size(); i++) {
            if (parsed.get(i) instanceof AsmLine.Instruction in && in.isJump() && in.operands().size() == 1) {
                Integer at = definedAt.get(in.operands().getFirst());
                if (at != null && at < i) loops.add(new int[] {at, i});
            }
        }
        Map<Integer, List<Integer>> inLoop = new HashMap<>();   // innermost loop's top -> its accesses to check
        Map<Integer, Integer> single = new HashMap<>();          // line -> width, checked one access at a time
        for (int i = 0; i < parsed.size(); i++) {
            if (!(parsed.get(i) instanceof AsmLine.Instruction in)) continue;
            String m = in.mnemonic();
            if (m.contains(" ") || in.operands().isEmpty() && STRINGS.matcher(m).matches()) {
                return null;                                       // string instructions: ranges of their own
            }
            int mem = MemoryOperands.memoryOperand(in);
            if (mem == -2) return null;
            if (mem < 0 || m.startsWith("lea") || m.startsWith("nop") || m.startsWith("prefetch")) continue;
            String op = in.operands().get(mem);
            if (op.startsWith("*") || m.startsWith("push") || m.startsWith("pop") || op.contains("%fs:")
                    || op.contains("%gs:")) return null;
            int width = MemoryOperands.width(in);
            if (width <= 0) return null;
            if (safe(op, width, sizes, framePointer)) continue;
            int[] loop = smallest(loops, i);
            if (loop == null || containsLoop(loops, loop)) {
                single.put(i, width);
            } else {
                inLoop.computeIfAbsent(loop[0], k -> new ArrayList<>()).add(i);
            }
        }
        Edits edits = new Edits();
        int ranges = 0;
        // an innermost loop's ranges moved out through the loops around it, level by level, with those loops'
        // own accesses, as long as each is straight-line code around the one below (NestHoist)
        for (var e : new ArrayList<>(inLoop.entrySet())) {
            int[] loop = smallest(loops, e.getValue().getFirst());
            LoopRanges.Summary sum = loop == null ? null : LoopRanges.summarize(loop[0], e.getValue(), parsed, definedAt, references);
            if (sum == null) continue;
            List<Integer> taken = new ArrayList<>();
            List<String> code = new ArrayList<>();
            int n = 0;
            for (int[] outer = parent(loops, loop); outer != null; outer = parent(loops, loop)) {
                if (loopsIn(loops, outer) != loopsIn(loops, loop) + 1) break;
                List<Integer> own = new ArrayList<>();
                for (int line : single.keySet()) if (line > outer[0] && line < outer[1] && !taken.contains(line)) own.add(line);
                own.sort(null);
                NestHoist.Level level = NestHoist.of(outer[0], loop[0], sum, own, parsed, definedAt, references);
                if (level == null) break;
                List<String> stay = LoopRanges.emit(level.atInner(), parsed);
                if (stay == null) break;
                edits.insertBefore(loop[0], stay);
                n += level.atInner().size();
                taken.addAll(own);
                sum = level.up();
                loop = outer;
            }
            if (loop[0] == e.getKey()) continue;                  // not moved: the loop below does it
            List<String> top = LoopRanges.emit(sum.ranges(), parsed);
            if (top == null) return null;
            edits.insertBefore(loop[0], top);
            ranges += n + sum.ranges().size();
            inLoop.remove(e.getKey());
            single.keySet().removeAll(taken);
        }
        for (var e : inLoop.entrySet()) {
            Edits loop = new Edits();
            int n = hoist(e.getKey(), e.getValue(), parsed, definedAt, references, loop);
            if (n >= 0) {
                edits.insertBefore(e.getKey(), loop.before.getOrDefault(e.getKey(), List.of()));
                ranges += n;
            } else if (calls(parsed, e.getKey())) {
                // a loop that calls pays a call per iteration anyway: its accesses are checked one by one
                for (int line : e.getValue()) single.put(line, MemoryOperands.width((AsmLine.Instruction) parsed.get(line)));
            } else {
                return null;                                      // a loop gcc may have vectorised: its body stays gcc's
            }
        }
        for (var e : single.entrySet()) {
            AsmLine.Instruction in = (AsmLine.Instruction) parsed.get(e.getKey());
            String op = in.operands().get(MemoryOperands.memoryOperand(in));
            edits.insertBefore(e.getKey(), singleCheck(op, e.getValue(), MemoryOperands.store(in, op), parsed, e.getKey()));
        }
        return new Cover(edits.apply(body), ranges, single.size());
    }

    /** A frame slot, or a global plus a constant gcc itself would leave unchecked. */
    private static boolean safe(String op, int width, Map<String, Long> sizes, boolean framePointer) {
        if (op.matches("-?\\d*\\(%rsp\\)") || framePointer && op.matches("-?\\d*\\(%rbp\\)")) return true;
        Matcher rip = RIP.matcher(op);
        String expression = rip.matches() ? rip.group(1) : op.contains("(") ? null : op;
        if (expression == null) return false;
        String symbol = null;
        long offset = 0;
        for (String term : expression.replace("-", "+-").split("\\+")) {
            if (term.isEmpty()) continue;
            if (term.matches("-?\\d+")) {
                offset += Long.parseLong(term);
            } else {
                if (symbol != null || term.startsWith("-")) return false;
                symbol = term;
            }
        }
        if (symbol == null) return false;
        if (symbol.matches("\\.LC\\d+")) return true;             // gcc's constants: copied with the body
        if (symbol.startsWith(".L") || symbol.contains("@")) return false;
        Long size = sizes.get(symbol);
        if (size == null) return offset == 0;                     // external: read as its declared type
        return offset >= 0 && offset + width <= size;
    }

    /** Whether the loop whose label is at {@code top} calls anything before its back edge. */
    private static boolean calls(List<AsmLine> parsed, int top) {
        String label = ((AsmLine.Label) parsed.get(top)).name();
        for (int i = top + 1; i < parsed.size(); i++) {
            if (!(parsed.get(i) instanceof AsmLine.Instruction in)) continue;
            if (in.mnemonic().startsWith("call")) return true;
            if (in.isJump() && in.operands().equals(List.of(label))) return false;
        }
        return false;
    }

    private static int[] smallest(List<int[]> loops, int line) {
        int[] best = null;
        for (int[] l : loops) {
            if (l[0] < line && line < l[1] && (best == null || l[1] - l[0] < best[1] - best[0])) best = l;
        }
        return best;
    }

    /** The smallest loop strictly around {@code inner}, or null. */
    private static int[] parent(List<int[]> loops, int[] inner) {
        int[] best = null;
        for (int[] l : loops) {
            if (l[0] <= inner[0] && inner[1] <= l[1] && (l[0] != inner[0] || l[1] != inner[1])
                    && (best == null || l[1] - l[0] < best[1] - best[0])) best = l;
        }
        return best;
    }

    /** How many loops lie strictly inside {@code outer}. */
    private static int loopsIn(List<int[]> loops, int[] outer) {
        int n = 0;
        for (int[] l : loops) {
            if (l != outer && l[0] >= outer[0] && l[1] <= outer[1] && !(l[0] == outer[0] && l[1] == outer[1])) n++;
        }
        return n;
    }

    private static boolean containsLoop(List<int[]> loops, int[] outer) {
        for (int[] l : loops) {
            if (l != outer && l[0] >= outer[0] && l[1] <= outer[1] && !(l[0] == outer[0] && l[1] == outer[1])) return true;
        }
        return false;
    }

    /** The range checks of one innermost loop at its entry; how many, or -1 when an access cannot be covered. */
    private static int hoist(int top, List<Integer> accesses, List<AsmLine> parsed, Map<String, Integer> definedAt,
                             Map<String, Integer> references, Edits edits) {
        LoopRanges.Summary sum = LoopRanges.summarize(top, accesses, parsed, definedAt, references);
        List<String> entry = sum == null ? null : LoopRanges.emit(sum.ranges(), parsed);
        if (entry == null) return -1;
        edits.insertBefore(top, entry);
        return sum.ranges().size();
    }

    /** One access checked before it, every register and the flags kept (the red zone skipped). */
    private static List<String> singleCheck(String op, int width, boolean store, List<AsmLine> parsed, int line) {
        String address = op;
        Matcher m = Pattern.compile("^(-?\\d*)\\(%rsp(,.*)?\\)$").matcher(op);
        if (m.matches()) {                                        // %rsp moved by the red zone and one push
            long disp = m.group(1).isEmpty() || m.group(1).equals("-") ? 0 : Long.parseLong(m.group(1));
            address = (disp + 136) + "(%rsp" + Objects.requireNonNullElse(m.group(2), "") + ")";
        }
        long packed = width | (store ? 1L << 8 : 0) | 1L << 9;   // one access: reported as one, not "by the loop"
        return List.of("\tleaq\t-128(%rsp), %rsp", "\tpushq\t%rdi", "\tleaq\t" + address + ", %rdi", "\tpushq\t%rsi",
                "\tmovq\t%rdi, %rsi", "\tpushq\t%rdx", "\tmovl\t$" + packed + ", %edx",
                "\tcall\t*__memtrace_check_loop@GOTPCREL(%rip)" + CheckSites.lineOf(parsed, line),
                "\tpopq\t%rdx", "\tpopq\t%rsi", "\tpopq\t%rdi", "\tleaq\t128(%rsp), %rsp");
    }
}
