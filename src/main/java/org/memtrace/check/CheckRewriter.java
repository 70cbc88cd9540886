package org.memtrace.check;

import java.util.HashMap;
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
 * NUL-terminated strings; loc is {@code file:line} or 0). Calls in a comdat group's sections (C++ inline
 * functions, templates, their lambdas) are in a table of the same layout in that group (counts 0), with its own
 * constructor and {@code .init_array} slot there: the linker may drop a comdat copy, and an entry of the object's
 * table pointing into it would then not link. Calls inside inline assembly get no entry.
 */
public final class CheckRewriter {
    private static final Pattern JUMP_LABEL = Pattern.compile("\\.L\\d+\\b");

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
        List<String> pruned = InlineChecks.inline(edits.apply(lines));
        return CheckSites.withSites(pruned, edits);
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
}
