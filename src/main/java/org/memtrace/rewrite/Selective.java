package org.memtrace.rewrite;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.memtrace.select.AnalysisOptions;
import org.memtrace.select.BinaryAnalyzer;
import org.memtrace.select.BlockModel;
import org.memtrace.select.ElfText;
import org.memtrace.select.FunctionModel;
import org.memtrace.select.ScoreTriplet;
import org.memtrace.select.Selection;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfFormatException;

/**
 * {@code memtrace run --mode rewrite --omega W}: which memory instructions of a module the planner traces,
 * chosen as {@code memtrace cc --omega W} chooses them (docs/selective-instrumentation.md, "On unmodified
 * binaries"): the {@code select} package's analysis of the module's {@code .text}, exactly what {@code memtrace
 * analyze --omega W} reports for the file: the representatives of each basic block, at ω = 1 one per equivalence
 * class (the paper's ω = 1; every memory instruction, its "NS", is a rewrite without {@code --omega}). Stack accesses are no memory references, as in the paper and {@code analyze}'s default
 * (a data access pattern; the short push, pop and ret next to branch targets are what the planner cannot move).
 *
 * @param omega   the cost factor, in [0, 1]
 * @param options the analysis options (chunk, scores, stack), {@code memtrace analyze}'s defaults
 */
public record Selective(double omega, AnalysisOptions options) {
    public Selective {
        if (!(omega >= 0 && omega <= 1)) throw new IllegalArgumentException("omega must be in [0,1], not " + omega);
    }

    /** The selection at {@code omega} with {@code memtrace analyze}'s defaults: chunk 4096, scores 1,2,4, no stack accesses. */
    public static Selective of(double omega) {
        return new Selective(omega, AnalysisOptions.DEFAULTS);
    }

    /** Changes whenever what a selection means changes, so a plan made for an older meaning is not taken for a current one. */
    static final String VERSION = "select-2";

    /** What goes into the plan's cache key: a plan made for another selection is another plan. */
    String key() {
        ScoreTriplet s = options.scores();
        return VERSION + " omega=" + omega + " chunk=" + options.chunkSize() + " scores=" + s.s1() + "," + s.s2() + "," + s.s3()
                + (options.includeStack() ? " stack" : " no-stack");
    }

    /** The value of {@code --omega} as given on a command line; a one-line message for anything but a number in [0,1]. */
    public static double parse(String v) {
        double w;
        try {
            w = Double.parseDouble(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("bad --omega '" + v + "': expected a number in [0,1]");
        }
        if (!(w >= 0 && w <= 1)) throw new IllegalArgumentException("bad --omega " + v + ": omega must be in [0,1]");
        return w;
    }

    /** A selected instruction's weights: its class (MA) and its class with the associated ones (AIA). */
    record Weight(int ma, int aia) {}

    /**
     * One basic block of the analysis: its memory references (n) and its selected instructions in address
     * order.
     */
    record Block(int references, List<Long> selected) {}

    /**
     * The selection of one module: the weight of every selected instruction by link-time address, the blocks,
     * and the totals the summary line gives (selected of memory references).
     */
    record Chosen(Map<Long, Weight> weights, List<Block> blocks, int references) {
        int selected() { return weights.size(); }

        boolean traced(long address) { return weights.containsKey(address); }

        /**
         * The site table's fields for the instructions the planner did patch ({@code patched}), as {@code
         * memtrace cc} fills them: the weights on each instruction's first site, and on the first site of a
         * block's first patched instruction flag 0x02 with n and the sums of the patched instructions' weights
         * (a selected instruction the planner left counts for nothing, so the accuracy never claims it).
         */
        SiteWeights siteWeights(Set<Long> patched) {
            Map<Long, SiteWeights.Fields> out = new HashMap<>();
            for (Block b : blocks) {
                long first = -1;
                int ma = 0, aia = 0;
                for (long a : b.selected()) {
                    if (!patched.contains(a)) continue;
                    Weight w = weights.get(a);
                    out.put(a, new SiteWeights.Fields(w.ma(), w.aia(), false, 0, 0, 0));
                    if (first < 0) first = a;
                    ma += w.ma();
                    aia += w.aia();
                }
                if (first >= 0) {
                    Weight w = weights.get(first);
                    out.put(first, new SiteWeights.Fields(w.ma(), w.aia(), true, b.references(), ma, aia));
                }
            }
            return SiteWeights.of(out);
        }
    }

    /** The selection over the module's {@code .text}, as {@code memtrace analyze} makes it. */
    Chosen choose(ElfFile elf) throws ElfFormatException {
        ElfText text = ElfText.of(elf);
        List<FunctionModel> models = new BinaryAnalyzer(options).analyze(text, text.functions());
        Map<Long, Weight> weights = new HashMap<>();
        List<Block> blocks = new ArrayList<>();
        int references = 0;
        for (FunctionModel f : models) {
            for (BlockModel b : f.blocks()) {
                references += b.references().size();
                if (b.references().isEmpty()) continue;
                Map<Long, Weight> here = new HashMap<>();
                for (Selection.Choice c : b.select(omega).knapsack())
                    here.put(c.candidate().representative().address(), new Weight(c.maWeight(), c.aiaWeight()));
                List<Long> order = new ArrayList<>(here.keySet());
                order.sort(null);
                weights.putAll(here);
                blocks.add(new Block(b.references().size(), order));
            }
        }
        return new Chosen(Map.copyOf(weights), List.copyOf(blocks), references);
    }
}
