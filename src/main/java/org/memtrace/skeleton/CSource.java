package org.memtrace.skeleton;

import org.memtrace.format.SkeletonFormat;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.memtrace.event.Event;
import org.memtrace.mtr.SkeletonTable;

/**
 * The C text of a skeleton program (docs/skeleton-c.md): a fixed part that reads the input and prints
 * Lackey lines, the table of logged sites, and one function per skeleton loop that ran, whose statements
 * are the loop body's accesses in program order with their affine addresses written out.
 */
final class CSource {
    private CSource() {}

    /** A loop this generator does not know how to write (a shape newer than it). */
    static final class UnknownShape extends Exception {
        UnknownShape(String message) { super(message); }
    }

    /** What the header comment says about the run. */
    record About(String trace, String source, String input, long logged, long computed, long blocks, int threads) {}

    static String render(About about, List<Event.ProbeSite> sites, List<LoggedInput.Placement> loops,
                         Map<LoggedInput.Placement, String> functions) throws UnknownShape {
        StringBuilder c = new StringBuilder(8192 + 40 * sites.size());
        c.append(header(about, loops.size()));
        c.append(RUNTIME);
        c.append("\n/* The sites whose accesses are logged: instruction, Lackey kind, bytes. */\n");
        c.append("enum { NSITES = ").append(sites.size()).append(" };\n");
        c.append("static const struct site sites[NSITES + 1] = {\n");
        for (Event.ProbeSite s : sites)
            c.append("    {0x").append(Long.toHexString(s.ip())).append(", '").append(kind(s.kind())).append("', ").append(s.size()).append("},\n");
        c.append("};\nstatic uint64_t last[NSITES + 1];\n");
        c.append(READER);
        for (LoggedInput.Placement p : loops) c.append('\n').append(loop(p, functions.get(p)));
        c.append("\n/* A loop run's record names its loop by its place here. */\n");
        if (loops.isEmpty()) {
            c.append("static void run(uint64_t loop)\n{\n    (void) loop;\n    bad(\"a loop run, but this trace ran no skeleton loop\");\n}\n");
        } else {
            c.append("static void (*const loops[])(void) = {");
            for (int i = 0; i < loops.size(); i++) c.append(i % 8 == 0 ? "\n    " : " ").append("loop").append(i).append(',');
            c.append("\n};\n\nstatic void run(uint64_t loop)\n{\n    if (loop >= sizeof loops / sizeof loops[0]) bad(\"a loop run names no loop\");\n");
            c.append("    loops[loop]();\n}\n");
        }
        c.append(MAIN.replace("@INPUT@", cString(about.input())));
        return c.toString();
    }

    private static String header(About a, int loops) {
        return """
                /* A skeleton of the run recorded in %s, written by `memtrace skeleton --emit-c`.
                 *
                 * It prints that run's data accesses again, without the program: the accesses of the %d skeleton
                 * loops below are computed from the registers each loop run logged at its entry (a loop is a C
                 * function: its addresses are affine in the iteration), the others are read from the logged input
                 * (%s: %,d logged accesses, %,d computed ones, %,d block operations, %d thread%s).
                 *
                 *     gcc -O2 -o skel %s && ./skel [%s] > accesses.txt
                 *
                 * Output: Valgrind Lackey's --trace-mem lines, " L addr,size", " S addr,size", " M addr,size" (a load
                 * and then a store of the same instruction, address and size), the lines `memtrace convert --to lackey`
                 * writes for the same trace. Block operations (memcpy and friends, the kernel's reads and writes of
                 * the program's memory, rep string instructions) become line-sized L and S lines as in that export;
                 * allocations and the other events print nothing. The threads' lines are interleaved at their events,
                 * in the order the trace's sequence numbers give.
                 *
                 * Wrong in what it cannot know: a thread's records are in program order, but the exact interleaving of
                 * two threads between their events is the reader's choice, not a fact the trace recorded. The input
                 * fits only this file: its loop and site numbers are this file's tables.
                 */
                """.formatted(comment(a.trace()), loops, comment(a.input()), a.logged(), a.computed(),
                a.blocks(), a.threads(), a.threads() == 1 ? "" : "s", comment(a.source()), comment(a.input()));
    }

    private static String comment(String s) { return s.replace("*/", "* /").replaceAll("[\\p{Cntrl}]", "?"); }

    /** One loop's function; the registers are named as the rewriter named them. */
    static String loop(LoggedInput.Placement p, String function) throws UnknownShape {
        SkeletonTable.Loop l = p.loop;
        List<SkeletonTable.Item> items = l.items();
        int slots = l.steps().length;
        String where = "0x" + Long.toHexString(l.entry() + p.bias);
        for (int i = 0; i < items.size(); i++) {
            SkeletonTable.Item it = items.get(i);
            if (it.nested() && l.nestAt(i) != null && it.cond() == 0) {
                if (i < l.exitItem()) throw new UnknownShape("the loop entered at " + where + " runs an inner loop before its test: loop shape not emitted");
                emittable(l.nestAt(i).inner(), where);
                continue;
            }
            if (it.kind() > 3) throw new UnknownShape("the loop entered at " + where + " has a body position of kind " + it.kind() + ": loop shape not emitted");
            boolean optional = it.cond() == SkeletonTable.OPTIONAL;
            if (it.cond() != 0 && !optional && it.cond() > l.markers().length)
                throw new UnknownShape("the loop entered at " + where + " has a position under condition " + it.cond() + ": loop shape not emitted");
            if (optional && it.computed())
                throw new UnknownShape("the loop entered at " + where + " computes an optional position: loop shape not emitted");
            if ((it.phase() & ~3) != 0)
                throw new UnknownShape("the loop entered at " + where + " has phase bits " + it.phase() + ": loop shape not emitted");
        }
        String[] reg = names(l.registers(), slots);
        // body: the iteration reads the register (an address, or the trip register at a marker); a step's source
        // register is read once, before the loop, for its entry value
        boolean[] moves = moves(l), body = new boolean[slots], stepped = new boolean[slots], read = new boolean[slots];
        if (l.markers().length > 0) body[l.tripSlot()] = true;
        for (SkeletonTable.Nest n : l.nests()) for (int s : nestSlots(n)) body[s] = true; // the inner loop's values read them
        for (SkeletonFormat.Condition cond : l.conditions()) {
            for (; cond != null; cond = cond.and()) {
                if (cond.slotA() != SkeletonTable.NONE) body[cond.slotA()] = true;
                if (cond.slotB() != SkeletonTable.NONE) body[cond.slotB()] = true;
            }
        }
        for (SkeletonTable.Item it : items) {
            if (!it.computed()) continue;
            if (it.baseSlot() != SkeletonTable.NONE) body[it.baseSlot()] = true;
            if (it.indexSlot() != SkeletonTable.NONE) body[it.indexSlot()] = true;
        }
        for (int s = 0; s < slots; s++) {
            stepped[s] = moves[s] && (body[s] || s == l.tripSlot());
            read[s] |= body[s];
            if (stepped[s] && l.stepSlots()[s] != SkeletonTable.NONE) read[l.stepSlots()[s]] = true;
        }
        long computed = items.stream().filter(SkeletonTable.Item::computed).count();
        long logged = items.stream().filter(it -> !it.computed() && !it.nested()).count();
        StringBuilder c = new StringBuilder();
        c.append("/* Loop ").append(p.index).append(function != null ? ", " + comment(function) : "").append(": entered at ").append(where).append(" (0x").append(Long.toHexString(l.entry()))
                .append(" in its file), ").append(p.runs).append(p.runs == 1 ? " run" : " runs").append(". Per iteration ")
                .append(computed).append(" computed and ").append(logged).append(" logged positions");
        if (!l.nests().isEmpty()) c.append(", ").append(l.nests().size()).append(" inner loops run whole");
        long computedIfs = java.util.Arrays.stream(l.conditions()).filter(java.util.Objects::nonNull).count();
        if (l.markers().length > computedIfs) c.append(", ").append(l.markers().length - computedIfs).append(" marked blocks or side exits");
        if (computedIfs > 0) c.append(", ").append(computedIfs).append(computedIfs == 1 ? " block" : " blocks").append(" under a computed condition");
        c.append(".\n * Registers logged at its entry:");
        for (int s = 0; s < slots; s++) c.append(' ').append(reg[s]).append(s + 1 < slots ? "," : ";");
        c.append(" the trip count is ").append(reg[l.tripSlot()]).append("'s change from entry to exit, in steps. */\n");
        c.append("static void loop").append(p.index).append("(void)\n{\n");
        c.append("    static uint64_t entry[").append(slots).append("]; /* the registers at the previous run's entry */\n");
        c.append("    const struct run ending = run_end();\n");
        for (int s = 0; s < slots; s++) {
            if (!read[s]) c.append("    (void) next(&entry[").append(s).append("]); /* ").append(reg[s]).append(": no address reads it */\n");
            else c.append("    ").append(body[s] && moves[s] ? "uint64_t " : "const uint64_t ").append(reg[s]).append(" = next(&entry[").append(s).append("]);\n");
        }
        for (int s = 0; s < slots; s++) {
            if (!stepped[s]) continue;
            c.append("    const uint64_t step_").append(reg[s]).append(" = ").append(constant(l.steps()[s]));
            if (l.stepSlots()[s] != SkeletonTable.NONE) c.append(" + ").append(reg[l.stepSlots()[s]]);
            c.append(";\n");
        }
        String trip = reg[l.tripSlot()];
        if (!moves[l.tripSlot()]) throw new UnknownShape("the loop entered at " + where + " has a trip register without a step: loop shape not emitted");
        c.append("    const uint64_t n = trips(ending, step_").append(trip).append(")")
                .append(l.tripBeforeExit() ? " - (ending.how == EXITED); /* the test counted the iteration it left in */\n" : ";\n");
        c.append("    for (uint64_t k = 0; k < n; k++) {\n");
        int entered = l.entryItem();
        // entered in the middle of its body: the first iteration starts there (its registers are a whole iteration's)
        if (entered > 0) c.append("        if (k == 0) goto entered;\n");
        Set<Integer> blocksUsed = new HashSet<>();
        for (SkeletonTable.Item it : items) if (it.cond() != 0 && it.cond() != SkeletonTable.OPTIONAL) blocksUsed.add(it.cond() - 1);
        int open = 0; // the marked block whose if is open; 0 none
        for (int pos = 0; pos <= items.size(); pos++) {
            SkeletonTable.Item it = pos < items.size() ? items.get(pos) : null;
            int cond = it == null || it.cond() == SkeletonTable.OPTIONAL ? 0 : it.cond();
            List<String> markers = new ArrayList<>();
            for (int m = 0; m < l.markers().length; m++) {
                if (l.markerPos()[m] != pos || !l.markerEnds()[m]) continue;
                markers.add("if (marker(" + m + ", " + tripValue(trip, l.markerPhase()[m]) + ")) return; /* side exit */");
            }
            // a side exit's jump before the entry does not run in the first iteration; a block's marker there does
            if (pos == entered && entered > 0) markers.add("entered:;");
            for (int m = 0; m < l.markers().length; m++) {
                if (l.markerPos()[m] != pos || l.markerEnds()[m]) continue;
                SkeletonFormat.Condition computedIf = l.conditions()[m];
                if (computedIf != null) {
                    if (blocksUsed.contains(m)) markers.add("const int block" + m + " = " + holds(computedIf, reg, moves) + ";");
                } else if (blocksUsed.contains(m)) markers.add("const int block" + m + " = marker(" + m + ", " + tripValue(trip, l.markerPhase()[m]) + ");");
                else markers.add("marker(" + m + ", " + tripValue(trip, l.markerPhase()[m]) + ");");
            }
            if (open != 0 && (cond != open || !markers.isEmpty() || pos == entered)) {
                c.append("        }\n");
                open = 0;
            }
            for (String m : markers) c.append("        ").append(m).append('\n');
            if (it == null) break;
            if (cond != 0 && cond != open) {
                c.append("        if (block").append(cond - 1).append(") {\n");
                open = cond;
            }
            String indent = open != 0 ? "            " : "        ";
            if (it.nested()) {
                nest(c, l.nestAt(pos), reg, p.bias, indent, 1);
                continue;
            }
            long ip = it.insn() + p.bias;
            c.append(indent);
            if (!it.computed()) {
                // a call's record: the callee's records (its own loop runs included) follow, up to the input's RETURN
                if (it.call() && it.cond() == SkeletonTable.OPTIONAL) c.append("if (logged_if(0x").append(Long.toHexString(ip)).append(")) callee();\n");
                else c.append(it.cond() == SkeletonTable.OPTIONAL ? "logged_if(0x" : "logged(0x").append(Long.toHexString(ip))
                        .append(it.call() ? "); callee();\n" : ");\n");
                continue;
            }
            c.append(statement(it, ip, reg, moves));
        }
        for (int s = 0; s < slots; s++)
            if (body[s] && moves[s]) c.append("        ").append(reg[s]).append(" += step_").append(reg[s]).append(";\n");
        c.append("    }\n");
        if (l.exitItem() > 0) {
            // tested at the top below code of its own: the iteration the run leaves in runs that code first
            c.append("    if (ending.how == EXITED) {\n");
            for (SkeletonTable.Item it : items.subList(0, l.exitItem())) {
                if (it.cond() != 0 || it.call())
                    throw new UnknownShape("the loop entered at " + where + " has a condition or call before its test: loop shape not emitted");
                c.append("        ").append(statement(it, it.insn() + p.bias, reg, moves));
            }
            c.append("    }\n");
        }
        c.append("}\n");
        return c.toString();
    }

    /** An inner loop an outer one runs whole: this generator writes it when its body is computed and unconditional. */
    private static void emittable(SkeletonTable.Loop inner, String where) throws UnknownShape {
        if (inner.markers().length > 0 || inner.exitItem() > 0 || inner.tripBeforeExit() || inner.entryItem() > 0
                || inner.stepSlots()[inner.tripSlot()] == SkeletonTable.NONE && inner.steps()[inner.tripSlot()] == 0)
            throw new UnknownShape("the loop entered at " + where + " runs an inner loop of a shape not emitted");
        for (int i = 0; i < inner.items().size(); i++) {
            SkeletonTable.Item it = inner.items().get(i);
            if (it.nested() && inner.nestAt(i) != null) emittable(inner.nestAt(i).inner(), where);
            else if (!it.computed() || it.cond() != 0 || (it.phase() & ~3) != 0)
                throw new UnknownShape("the loop entered at " + where + " runs an inner loop of a shape not emitted");
        }
    }

    /** Which of the loop's slots change from iteration to iteration (a constant step or a step slot). */
    private static boolean[] moves(SkeletonTable.Loop l) {
        boolean[] moves = new boolean[l.steps().length];
        for (int s = 0; s < moves.length; s++) moves[s] = l.steps()[s] != 0 || l.stepSlots()[s] != SkeletonTable.NONE;
        return moves;
    }

    /** The outer loop's slots an inner loop's values read. */
    private static Set<Integer> nestSlots(SkeletonTable.Nest n) {
        Set<Integer> slots = new HashSet<>();
        for (SkeletonTable.Affine a : n.entry()) for (int s : a.slots()) slots.add(s);
        for (int s : n.exit().slots()) slots.add(s);
        return slots;
    }

    /**
     * An inner loop run whole where its outer loop runs it: a block of its own whose registers (named with the
     * nesting depth) start at the values the outer loop's give, and whose trip count is its trip register's way
     * from there to the value it is left at, in steps.
     */
    private static void nest(StringBuilder c, SkeletonTable.Nest n, String[] outer, long bias, String indent, int depth) {
        SkeletonTable.Loop l = n.inner();
        int slots = l.steps().length;
        String[] reg = names(l.registers(), slots);
        for (int s = 0; s < slots; s++) reg[s] += "_" + depth;
        boolean[] moves = moves(l);
        // declared when read: by an address, as the trip register, by a deeper loop's values, as another's step
        boolean[] used = new boolean[slots];
        used[l.tripSlot()] = true;
        for (int i = 0; i < l.items().size(); i++) {
            SkeletonTable.Item it = l.items().get(i);
            if (it.nested()) for (int s : nestSlots(l.nestAt(i))) used[s] = true;
            if (!it.computed()) continue;
            if (it.baseSlot() != SkeletonTable.NONE) used[it.baseSlot()] = true;
            if (it.indexSlot() != SkeletonTable.NONE) used[it.indexSlot()] = true;
        }
        for (int s = 0; s < slots; s++) if (used[s] && moves[s] && l.stepSlots()[s] != SkeletonTable.NONE) used[l.stepSlots()[s]] = true;
        String in = indent + "    ";
        c.append(indent).append("{ /* the inner loop entered at 0x").append(Long.toHexString(l.entry() + bias))
                .append(", run whole: its registers from this loop's */\n");
        for (int s = 0; s < slots; s++)
            if (used[s]) c.append(in).append("uint64_t ").append(reg[s]).append(" = ").append(affine(n.entry()[s], outer)).append(";\n");
        for (int s = 0; s < slots; s++) {
            if (!used[s] || !moves[s]) continue;
            c.append(in).append("const uint64_t step_").append(reg[s]).append(" = ").append(constant(l.steps()[s]));
            if (l.stepSlots()[s] != SkeletonTable.NONE) c.append(" + ").append(reg[l.stepSlots()[s]]);
            c.append(";\n");
        }
        String trip = reg[l.tripSlot()];
        c.append(in).append("const uint64_t n_").append(depth).append(" = (uint64_t) ((int64_t) (").append(affine(n.exit(), outer))
                .append(" - ").append(trip).append(") / (int64_t) step_").append(trip).append(");\n");
        c.append(in).append("for (uint64_t k_").append(depth).append(" = 0; k_").append(depth).append(" < n_").append(depth)
                .append("; k_").append(depth).append("++) {\n");
        for (int i = 0; i < l.items().size(); i++) {
            SkeletonTable.Item it = l.items().get(i);
            if (it.nested()) nest(c, l.nestAt(i), reg, bias, in + "    ", depth + 1);
            else c.append(in).append("    ").append(statement(it, it.insn() + bias, reg, moves));
        }
        for (int s = 0; s < slots; s++)
            if (used[s] && moves[s]) c.append(in).append("    ").append(reg[s]).append(" += step_").append(reg[s]).append(";\n");
        c.append(in).append("}\n").append(indent).append("}\n");
    }

    /** A value an outer loop computes, in C: its registers as they are at the iteration's start. */
    private static String affine(SkeletonTable.Affine a, String[] outer) {
        StringBuilder e = new StringBuilder("(uint64_t) ").append(constant(a.constant()));
        for (int j = 0; j < a.slots().length; j++) {
            e.append(" + ");
            if (a.factors()[j] != 1) e.append(constant(a.factors()[j])).append(" * ");
            e.append(outer[a.slots()[j]]);
        }
        return e.toString();
    }

    /** A computed position's call, or a logged one's. */
    private static String statement(SkeletonTable.Item it, long ip, String[] reg, boolean[] moves) {
        if (!it.computed()) return "logged(0x" + Long.toHexString(ip) + ");\n";
        return switch (it.kind()) {
            case 1 -> "load";
            case 2 -> "store";
            default -> "modify";
        } + "(0x" + Long.toHexString(ip) + ", " + address(it, reg, moves) + ", " + it.size() + ");\n";
    }

    /** A computed condition's calls of {@code holds}, and-ed: their operands as the registers are at the compare, or its immediates. */
    private static String holds(SkeletonFormat.Condition c, String[] reg, boolean[] moves) {
        String term = "holds(" + c.op() + ", " + c.width() + ", " + c.cc() + ", " + (c.whenTaken() ? 1 : 0) + ", "
                + operand(c.slotA(), c.immA(), (c.phase() & 1) != 0, reg, moves) + ", "
                + operand(c.slotB(), c.immB(), (c.phase() & 2) != 0, reg, moves) + ")";
        return c.and() == null ? term : term + " && " + holds(c.and(), reg, moves);
    }

    private static String operand(int slot, long imm, boolean updated, String[] reg, boolean[] moves) {
        if (slot == SkeletonTable.NONE) return "(uint64_t) " + constant(imm);
        return updated && moves[slot] ? reg[slot] + " + step_" + reg[slot] : reg[slot];
    }

    /** The trip register's value at a marker: before its update in the body, or after. */
    private static String tripValue(String trip, boolean updated) {
        return updated ? trip + " + step_" + trip : trip;
    }

    /** disp + base + scale·index, each register as it is at the access (its update before it in the body or not). */
    static String address(SkeletonTable.Item it, String[] reg, boolean[] moves) {
        List<String> terms = new ArrayList<>();
        if (it.baseSlot() != SkeletonTable.NONE) {
            String b = reg[it.baseSlot()];
            terms.add((it.phase() & 1) != 0 && moves[it.baseSlot()] ? b + " + step_" + b : b);
        }
        if (it.indexSlot() != SkeletonTable.NONE) {
            String x = reg[it.indexSlot()];
            String v = (it.phase() & 2) != 0 && moves[it.indexSlot()] ? "(" + x + " + step_" + x + ")" : x;
            terms.add(it.scale() == 1 ? v : it.scale() + " * " + v);
        }
        long d = it.displacement();
        if (terms.isEmpty()) return "(uint64_t) " + constant(d);
        String e = String.join(" + ", terms);
        if (d == 0) return e;
        if (d < 0 && d != Long.MIN_VALUE) return e + " - " + constant(-d);
        return e + " + " + constant(d);
    }

    /** A 64-bit constant as C reads it: decimal when small, else hex (unsigned, two's complement). */
    private static String constant(long v) {
        if (v >= 0 && v < 65536) return Long.toString(v);
        return "0x" + Long.toHexString(v) + "u";
    }

    /** C identifiers for the slots' registers: the rewriter's names, else slotN. */
    private static String[] names(List<String> registers, int slots) {
        String[] n = new String[slots];
        Set<String> taken = new HashSet<>();
        for (int s = 0; s < slots; s++) {
            String r = s < registers.size() ? registers.get(s) : "";
            boolean ok = r.matches("[a-z][a-z0-9]*") && !C_WORDS.contains(r) && taken.add(r);
            n[s] = ok ? r : "slot" + s;
            taken.add(n[s]);
        }
        return n;
    }

    /** Words a register name must not be in the generated C (its keywords and the fixed part's names). */
    private static final Set<String> C_WORDS = Set.of("auto", "char", "do", "for", "if", "int", "k", "n", "run", "get", "in",
            "last", "sites", "load", "store", "modify", "marker", "logged", "tid", "line", "out", "used", "block", "bad", "next",
            "entry", "ending", "peek", "chunk", "chunks", "trips", "settle", "holds", "jump");

    private static char kind(Event.ProbeKind k) {
        return switch (k) {
            case LOAD -> 'L';
            case STORE -> 'S';
            case MODIFY -> 'M';
        };
    }

    private static String cString(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            if (ch == '"' || ch == '\\') b.append('\\').append(ch);
            else if (ch < 0x20 || ch > 0x7e) b.append(String.format("\\%03o", (int) ch & 0xff));
            else b.append(ch);
        }
        return b.append('"').toString();
    }

    /** The fixed C (skeleton.c beside this class): its parts by name, cut at the lines "//@ NAME". */
    private static final Map<String, String> PARTS = parts("skeleton.c");
    /** Output and the accesses' common path: the same line rules as memtrace's Lackey export. */
    private static final String RUNTIME = PARTS.get("runtime");
    /** Reading the input; the loops' helpers are inline so that a file whose loops use few of them compiles without warnings. */
    private static final String READER = PARTS.get("reader");
    private static final String MAIN = PARTS.get("main");

    /** The resource's parts: each from the line after its "//@ NAME" line up to the next such line. */
    static Map<String, String> parts(String resource) {
        String text;
        try (var in = CSource.class.getResourceAsStream(resource)) {
            if (in == null) throw new IllegalStateException("resource " + resource + " missing from the jar");
            text = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        var parts = new java.util.LinkedHashMap<String, String>();
        String name = null;
        int start = 0;
        for (int at = 0; at < text.length(); ) {
            int eol = text.indexOf('\n', at);
            int next = eol < 0 ? text.length() : eol + 1;
            if (text.startsWith("//@ ", at)) {
                if (name != null) parts.put(name, text.substring(start, at));
                name = text.substring(at + 4, eol < 0 ? text.length() : eol).strip();
                start = next;
            }
            at = next;
        }
        if (name != null) parts.put(name, text.substring(start));
        return Map.copyOf(parts);
    }
}
