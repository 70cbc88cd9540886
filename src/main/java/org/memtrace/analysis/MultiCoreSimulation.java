package org.memtrace.analysis;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.memtrace.cache.CoherentCaches;
import org.memtrace.cache.LevelStats;
import org.memtrace.event.Event;
import org.memtrace.trace.Naming;

/**
 * {@code memtrace cachesim --cores N}: the trace's threads on N simulated cores ({@link CoherentCaches}),
 * the k-th thread to access memory on core k mod N, and the lines that moved between cores with their
 * false-sharing verdicts ({@link SharedLines}): the perf c2c view of a machine without the counters.
 * Block operations are line-sized chunks ({@link BlockChunks}) of the thread that made them.
 */
public final class MultiCoreSimulation implements Analysis, CoherentCaches.Transfers {
    private final CoherentCaches caches;
    private final SharedLines lines;
    private final Map<Integer, Integer> coreOf = new HashMap<>();
    private final List<List<Integer>> threadsOf = new ArrayList<>();
    private final int lineSize;
    private long accesses, blocks;
    private CacheSimulation.Output output;
    /** The bytes of the line being accessed, for {@link #transfer}. */
    private long currentBits;

    public MultiCoreSimulation(CoherentCaches caches, Naming naming) {
        this.caches = caches;
        this.lineSize = caches.lineSize();
        long privateLines = 0;
        for (LevelStats l : caches.stats(0).subList(0, caches.privateLevels())) privateLines += l.geometry().size() / lineSize;
        this.lines = new SharedLines(caches.cores(), lineSize, naming, (int) Math.min(1 << 24, Math.max(1 << 16, 4 * caches.cores() * privateLines)));
        lines.heldBy(line -> {
            for (int c = 0; c < caches.cores(); c++) if (caches.holds(c, line * lineSize)) return true;
            return false;
        });
        for (int c = 0; c < caches.cores(); c++) threadsOf.add(new ArrayList<>());
    }

    /** Have {@link #finish} write the results (the JSON too when the output names a file). */
    public MultiCoreSimulation writeTo(CacheSimulation.Output output) {
        this.output = output;
        return this;
    }

    private int core(int tid) {
        Integer c = coreOf.get(tid);
        if (c == null) {
            c = coreOf.size() % caches.cores();
            coreOf.put(tid, c);
            threadsOf.get(c).add(tid);
        }
        return c;
    }

    @Override
    public void access(Access t) {
        accesses++;
        run(t.tid(), t.address(), t.size(), t.store());
    }

    @Override
    public void block(long sequence, Event.Block b) {
        blocks++;
        BlockChunks.expand(b, lineSize, (address, size, write) -> run(b.tid(), address, size, write));
    }

    private void run(int tid, long address, int size, boolean store) {
        int core = core(tid);
        long end = address + Math.max(size, 1);
        for (long a = address; a < end; ) {
            long next = Math.min(end, (a | (lineSize - 1)) + 1);
            long bits = lines.bits(a, (int) (next - a));
            currentBits = bits;
            int reached = caches.accessLine(core, a, store, this);
            lines.used(core, tid, a, bits, store, reached >= caches.privateLevels());
            a = next;
        }
    }

    @Override
    public void transfer(int requester, int holder, long lineAddress, boolean dirty, boolean store) {
        lines.transfer(requester, holder, lineAddress, dirty, store, currentBits);
    }

    @Override
    public String name() { return "cachesim"; }

    @Override
    public void finish(Ending ending) throws IOException {
        if (output != null) output.write(out -> print(out, ending.records()), () -> json(ending.records()));
    }

    private String layout() {
        int n = caches.totals().size(), p = caches.privateLevels();
        String priv = p == 1 ? "L1" : "L1-L" + p;
        return caches.cores() + " cores, " + priv + " private" + (p < n ? ", L" + n + " shared" : "");
    }

    private void print(PrintWriter out, long events) {
        out.printf(Locale.ROOT, "memtrace cachesim: %s, policy %s, %s, %,d threads, %,d events, %,d loads and stores, %,d block operations%n",
                output.trace(), output.policy(), layout(), coreOf.size(), events, accesses, blocks);
        CacheSimulation.printLevels(out, caches.totals());
        out.println();
        out.printf(Locale.ROOT, "%-5s %15s %15s %8s %13s %13s  %s%n", "core", "L1 accesses", "L1 misses", "miss%", "invalidated",
                "HITM", "threads");
        for (int c = 0; c < caches.cores(); c++) {
            LevelStats l1 = caches.stats(c).getFirst();
            out.printf(Locale.ROOT, "%-5d %,15d %,15d %7.3f%% %,13d %,13d  %s%n", c, l1.accesses(), l1.misses(), 100 * l1.missRatio(),
                    caches.invalidated(c), caches.hitm(c), threads(c));
        }
        out.println();
        List<SharedLines.Row> rows = lines.rows(output.top());
        if (rows.isEmpty()) {
            out.println("no line moved between cores");
        } else {
            out.printf(Locale.ROOT, "lines moved between cores (%,d; top %d by HITM + invalidations), byte offsets in the line%n",
                    lines.lineCount(), rows.size());
            out.printf(Locale.ROOT, "  %-18s %10s %13s %10s %10s  %-24s %s%n", "line", "HITM", "invalidations", "false", "true",
                    "verdict", "object");
            for (SharedLines.Row r : rows) {
                out.printf(Locale.ROOT, "  0x%-16x %,10d %,13d %,10d %,10d  %-24s %s%n", r.line, r.hitm, r.invalidations,
                        r.falseSharing, r.trueSharing, r.verdict(), r.object);
                r.threads.forEach((tid, b) -> out.printf(Locale.ROOT, "      thread %d (core %d): read %s, wrote %s  (%s)%n", tid,
                        coreOf.get(tid), orNone(lines.ranges(b.read)), orNone(lines.ranges(b.written)), b.name));
            }
        }
        out.flush();
    }

    private static String orNone(String ranges) { return ranges.isEmpty() ? "-" : ranges; }

    private String threads(int core) {
        List<Integer> t = threadsOf.get(core);
        if (t.isEmpty()) return "-";
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < t.size() && i < 8; i++) s.append(i == 0 ? "" : ",").append(t.get(i));
        if (t.size() > 8) s.append(",… (").append(t.size()).append(')');
        return s.toString();
    }

    private Map<String, Object> json(long events) {
        Map<String, Object> j = new LinkedHashMap<>();
        j.put("trace", output.trace());
        j.put("policy", output.policy());
        j.put("seed", output.seed());
        j.put("cores", caches.cores());
        j.put("privateLevels", caches.privateLevels());
        j.put("events", events);
        j.put("accesses", accesses);
        j.put("blockOperations", blocks);
        j.put("levels", caches.totals().stream().map(MultiCoreSimulation::level).toList());
        List<Map<String, Object>> cores = new ArrayList<>();
        for (int c = 0; c < caches.cores(); c++) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("core", c);
            m.put("threads", threadsOf.get(c));
            m.put("invalidated", caches.invalidated(c));
            m.put("hitm", caches.hitm(c));
            m.put("levels", caches.stats(c).stream().map(MultiCoreSimulation::level).toList());
            cores.add(m);
        }
        j.put("perCore", cores);
        List<Map<String, Object>> rows = new ArrayList<>();
        for (SharedLines.Row r : lines.rows(output.top())) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("line", r.line);
            m.put("object", r.object);
            m.put("hitm", r.hitm);
            m.put("invalidations", r.invalidations);
            m.put("falseSharing", r.falseSharing);
            m.put("trueSharing", r.trueSharing);
            m.put("verdict", r.verdict());
            List<Map<String, Object>> threads = new ArrayList<>();
            r.threads.forEach((tid, b) -> {
                // in a fixed order (Map.of's differs per JVM), so that two runs' JSON compare byte for byte
                Map<String, Object> t = new LinkedHashMap<>();
                t.put("thread", tid);
                t.put("core", coreOf.get(tid));
                t.put("read", lines.ranges(b.read));
                t.put("written", lines.ranges(b.written));
                t.put("name", b.name);
                threads.add(t);
            });
            m.put("threads", threads);
            rows.add(m);
        }
        j.put("sharedLines", rows);
        return j;
    }

    /** A level as JSON: the per-core results leave the miss ratio to the reader. */
    private static Map<String, Object> level(LevelStats l) { return CacheSimulation.levelJson(l, false); }

    /** The lines that moved between cores, for tests: line address → verdict, the most transfers first. */
    public Map<Long, String> verdicts(int n) {
        Map<Long, String> m = new LinkedHashMap<>();
        for (SharedLines.Row r : lines.rows(n)) m.put(r.line, r.verdict() + " " + r.object + " hitm=" + r.hitm + " inv=" + r.invalidations
                + " false=" + r.falseSharing + " true=" + r.trueSharing);
        return m;
    }

    public CoherentCaches caches() { return caches; }
}
