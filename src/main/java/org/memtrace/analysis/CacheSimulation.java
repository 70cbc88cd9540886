package org.memtrace.analysis;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.memtrace.cache.CacheHierarchy;
import org.memtrace.cache.LevelStats;
import org.memtrace.event.Event;
import org.memtrace.trace.Naming;

/**
 * Runs the trace's loads, stores and block operations through a cache hierarchy and charges every line
 * that missed the first or the last level to the instruction that made the access and to the object that
 * holds the accessed byte. Objects are named as the trace names them at that moment (a line of a freed
 * block counts for {@code <freed:…>}), through {@link ObjectMisses}, which names an address only when no
 * recent heap block or earlier miss covers it. Instructions are counted by address and named at the end;
 * each keeps its loads and stores too ({@link InstructionCounts}), for cg_annotate's per-line view
 * ({@link SourceAnnotation}).
 */
public final class CacheSimulation implements Analysis {
    private final CacheHierarchy caches;
    private final Naming naming;
    private final InstructionCounts byInstruction = new InstructionCounts();
    /**
     * Tags a key of {@link #byInstruction} that is a block's return address (Event.Block#lineAddress): named as
     * the trace names the call, its line is the call's, looked up a byte before (not the next statement's). A
     * non-canonical bit, so the instruction at the return address keeps its own counts and line.
     */
    private static final long CALL = 1L << 62;
    private final ObjectMisses byObject;
    private long accesses, blocks;
    private Output output;

    /** Misses charged to one instruction or object. */
    public record Misses(String name, long firstLevel, long lastLevel) {}

    /**
     * Where {@link #finish} writes the results: the tables on {@code text}, {@code top} rows per ranking, and
     * with {@code json} (null for none) the same as JSON written to that file. {@code trace}, {@code policy}
     * and {@code seed} are shown as given; {@code lines} adds the rankings of source lines, {@code annotate}
     * the hottest files' source with the counts beside their lines ({@link SourceAnnotation}), relative
     * paths looked up in {@code sourceDirs} first.
     */
    public record Output(PrintWriter text, Path json, int top, String trace, String policy, long seed, boolean lines, boolean annotate,
            List<Path> sourceDirs) {
        /** Without the rankings of source lines. */
        public Output(PrintWriter text, Path json, int top, String trace, String policy, long seed) {
            this(text, json, top, trace, policy, seed, false, false, List.of());
        }

        /** The tables onto {@link #text}, then, when {@link #json} names a file, the results as JSON into it. */
        void write(Consumer<PrintWriter> tables, Supplier<Object> results) throws IOException {
            tables.accept(text);
            if (json == null) return;
            try {
                new ObjectMapper().writerWithDefaultPrettyPrinter().writeValue(json.toFile(), results.get());
            } catch (IOException e) {
                throw new IOException("cannot write the JSON results: " + e.getMessage(), e);
            }
        }
    }

    public CacheSimulation(CacheHierarchy caches, Naming naming) {
        this.caches = caches;
        this.naming = naming;
        this.byObject = new ObjectMisses(naming);
    }

    /** Have {@link #finish} write the results. */
    public CacheSimulation writeTo(Output output) {
        this.output = output;
        return this;
    }

    @Override
    public void access(Access t) {
        accesses++;
        long r = caches.access(t.address(), t.size(), t.store());
        byInstruction.add(t.ip(), t.store(), r);
        if (r != 0) byObject.add(t.address(), CacheHierarchy.firstLevelMisses(r), CacheHierarchy.lastLevelMisses(r));
    }

    @Override
    public void block(long sequence, Event.Block b) {
        blocks++;
        long at = b.lineAddress() == b.ip() ? b.ip() : b.ip() | CALL;
        BlockChunks.expand(b, caches.lineSize(), (address, size, write) -> {
            long r = caches.access(address, size, write);
            byInstruction.add(at, write, r);
            if (r != 0) byObject.add(address, CacheHierarchy.firstLevelMisses(r), CacheHierarchy.lastLevelMisses(r));
        });
    }

    @Override
    public void namesChanged() {
        byObject.namesChanged();
    }

    @Override
    public String name() { return "cachesim"; }

    /** Writes the results if asked to. */
    @Override
    public void finish(Ending ending) throws IOException {
        if (output != null) output.write(out -> print(out, ending.records()), () -> json(ending.records()));
    }

    private void print(PrintWriter out, long events) {
        List<LevelStats> levels = levels();
        out.printf(Locale.ROOT, "memtrace cachesim: %s, policy %s, %,d events, %,d loads and stores, %,d block operations%n",
                output.trace(), output.policy(), events, accesses, blocks);
        printLevels(out, levels);
        String ll = levels.getLast().name();
        boolean one = levels.size() == 1;
        int top = output.top();
        ranking(out, "instructions by L1 misses", topInstructions(top, false), one, ll);
        if (!one) ranking(out, "instructions by " + ll + " misses", topInstructions(top, true), false, ll);
        ranking(out, "objects by L1 misses", topObjects(top, false), one, ll);
        if (!one) ranking(out, "objects by " + ll + " misses", topObjects(top, true), false, ll);
        if (output.lines()) {
            ranking(out, "source lines by L1 misses", topLines(top, false), one, ll);
            if (!one) ranking(out, "source lines by " + ll + " misses", topLines(top, true), false, ll);
            Misses none = withoutLine();
            if (none.firstLevel() + none.lastLevel() > 0)
                out.printf(Locale.ROOT, "  (%,d L1 and %,d %s misses at instructions without a line table: no -g, or no module)%n",
                        none.firstLevel(), none.lastLevel(), ll);
        }
        if (output.annotate()) SourceAnnotation.print(out, annotation().files(SourceAnnotation.FILES, output.sourceDirs()), one ? null : ll);
        out.flush();
    }

    /** The table of levels: one row a level, its geometry and counts (cachesim, one core or all of them). */
    static void printLevels(PrintWriter out, List<LevelStats> levels) {
        out.printf(Locale.ROOT, "%-5s %-12s %15s %15s %8s %15s %15s %15s %15s %15s%n", "level", "geometry", "accesses",
                "misses", "miss%", "loads", "load misses", "stores", "store misses", "writebacks");
        for (LevelStats l : levels)
            out.printf(Locale.ROOT, "%-5s %-12s %,15d %,15d %7.3f%% %,15d %,15d %,15d %,15d %,15d%n", l.name(), l.geometry(),
                    l.accesses(), l.misses(), 100 * l.missRatio(), l.loads(), l.loadMisses(), l.stores(), l.storeMisses(),
                    l.writebacks());
    }

    private static void ranking(PrintWriter out, String title, List<Misses> rows, boolean oneLevel, String ll) {
        if (rows.isEmpty()) return;
        out.println();
        out.println("top " + title);
        if (oneLevel) out.printf(Locale.ROOT, "  %15s  %s%n", "L1 misses", "name");
        else out.printf(Locale.ROOT, "  %15s %15s  %s%n", "L1 misses", ll + " misses", "name");
        for (Misses m : rows) {
            if (oneLevel) out.printf(Locale.ROOT, "  %,15d  %s%n", m.firstLevel(), m.name());
            else out.printf(Locale.ROOT, "  %,15d %,15d  %s%n", m.firstLevel(), m.lastLevel(), m.name());
        }
    }

    private Map<String, Object> json(long events) {
        int top = output.top();
        Map<String, Object> j = new LinkedHashMap<>();
        j.put("trace", output.trace());
        j.put("policy", output.policy());
        j.put("seed", output.seed());
        j.put("events", events);
        j.put("accesses", accesses);
        j.put("blockOperations", blocks);
        j.put("levels", levels().stream().map(l -> levelJson(l, true)).toList());
        j.put("instructionsByFirstLevelMisses", topInstructions(top, false));
        j.put("instructionsByLastLevelMisses", topInstructions(top, true));
        j.put("objectsByFirstLevelMisses", topObjects(top, false));
        j.put("objectsByLastLevelMisses", topObjects(top, true));
        if (output.lines()) {
            j.put("linesByFirstLevelMisses", topLines(top, false));
            j.put("linesByLastLevelMisses", topLines(top, true));
            j.put("missesWithoutLine", withoutLine());
        }
        if (output.annotate()) j.put("annotatedSource", annotation().files(SourceAnnotation.FILES, output.sourceDirs()));
        return j;
    }

    /** One level's counts as JSON; {@code missRatio} adds the ratio (cachesim's one-core results have it). */
    public static Map<String, Object> levelJson(LevelStats l, boolean missRatio) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", l.name());
        m.put("geometry", l.geometry().toString());
        m.put("accesses", l.accesses());
        m.put("misses", l.misses());
        if (missRatio) m.put("missRatio", l.missRatio());
        m.put("loads", l.loads());
        m.put("loadMisses", l.loadMisses());
        m.put("stores", l.stores());
        m.put("storeMisses", l.storeMisses());
        m.put("writebacks", l.writebacks());
        return m;
    }

    /** Loads and stores of the trace simulated so far (block operations not included). */
    public long accesses() { return accesses; }

    public long blockOperations() { return blocks; }

    public List<LevelStats> levels() { return caches.stats(); }

    /** The instructions with the most misses, by first-level misses or, with {@code lastLevel}, last-level ones. */
    public List<Misses> topInstructions(int n, boolean lastLevel) {
        Map<String, long[]> named = new HashMap<>();
        byInstruction.forEach((ip, c) -> {
            if (firstLevel(c) + lastLevel(c) == 0) return;
            long[] sum = named.computeIfAbsent(naming.code(ip & ~CALL), k -> new long[2]);
            sum[0] += firstLevel(c);
            sum[1] += lastLevel(c);
        });
        return top(named, n, lastLevel);
    }

    /**
     * Source lines ({@code file:line} of the module's DWARF line table, {@link Naming#source}) with the most
     * misses: every instruction's misses added to its line, as cg_annotate counts them. Instructions without
     * a line are left out here and counted by {@link #withoutLine}.
     */
    public List<Misses> topLines(int n, boolean lastLevel) {
        Map<String, long[]> lines = new HashMap<>();
        byInstruction.forEach((ip, c) -> {
            String line = naming.source(lineAddress(ip));
            if (line == null || firstLevel(c) + lastLevel(c) == 0) return;
            long[] sum = lines.computeIfAbsent(line, k -> new long[2]);
            sum[0] += firstLevel(c);
            sum[1] += lastLevel(c);
        });
        return top(lines, n, lastLevel);
    }

    /** The misses of instructions that have no source line, named {@code ???} as cg_annotate names them. */
    public Misses withoutLine() {
        long[] sum = new long[2];
        byInstruction.forEach((ip, c) -> {
            if (naming.source(lineAddress(ip)) != null) return;
            sum[0] += firstLevel(c);
            sum[1] += lastLevel(c);
        });
        return new Misses("???", sum[0], sum[1]);
    }

    /** Where a key's line is looked up: a call's a byte before its return address. */
    private static long lineAddress(long key) {
        return (key & CALL) != 0 ? (key & ~CALL) - 1 : key;
    }

    private static long firstLevel(long[] c) { return c[InstructionCounts.L1_LOAD_MISSES] + c[InstructionCounts.L1_STORE_MISSES]; }

    private static long lastLevel(long[] c) { return c[InstructionCounts.LL_LOAD_MISSES] + c[InstructionCounts.LL_STORE_MISSES]; }

    /** The six counts per source line, and the hottest files annotated (cg_annotate's views). */
    public SourceAnnotation annotation() {
        return new SourceAnnotation(byInstruction, naming, CacheSimulation::lineAddress);
    }

    public List<Misses> topObjects(int n, boolean lastLevel) {
        Map<String, long[]> named = new HashMap<>();
        byObject.forEach((name, l1, ll) -> named.put(name, new long[] {l1, ll}));
        return top(named, n, lastLevel);
    }

    private static List<Misses> top(Map<String, long[]> counts, int n, boolean lastLevel) {
        List<Misses> all = new ArrayList<>();
        counts.forEach((name, m) -> {
            if ((lastLevel ? m[1] : m[0]) > 0) all.add(new Misses(name, m[0], m[1]));
        });
        Comparator<Misses> order = Comparator.comparingLong(lastLevel ? Misses::lastLevel : Misses::firstLevel).reversed()
                .thenComparing(Comparator.comparingLong(lastLevel ? Misses::firstLevel : Misses::lastLevel).reversed())
                .thenComparing(Misses::name);
        all.sort(order);
        return all.size() > n ? List.copyOf(all.subList(0, n)) : List.copyOf(all);
    }
}
