package org.memtrace.report;

import java.io.IOException;
import java.io.Writer;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.memtrace.analysis.Access;
import org.memtrace.analysis.Allocation;
import org.memtrace.analysis.Analysis;
import org.memtrace.analysis.CacheSimulation;
import org.memtrace.analysis.InstructionCounts;
import org.memtrace.analysis.SourceAnnotation;
import org.memtrace.cache.CacheHierarchy;
import org.memtrace.cache.LevelStats;
import org.memtrace.analysis.Ending;
import org.memtrace.analysis.Summary;
import org.memtrace.event.Event;
import org.memtrace.io.IoReason;
import org.memtrace.trace.Naming;

/**
 * {@code memtrace report}: follows the interpreted trace (live or saved) with a summary and a
 * {@link ReportAnalysis} of its own, keeps the regions and the run's facts, and at the end writes one
 * self-contained HTML page: the data as one inline JSON blob that a small inline script draws
 * (docs/report.md).
 */
public final class Report implements Analysis {
    private final Naming naming;
    private final Summary summary;
    private final ReportAnalysis analysis;
    /** Where the page is written; null for no page. The page's final name, or null when the caller names it. */
    private Path partial, page;
    /** How messages name the page: its final name, never the partial file's. */
    private String shown;
    private int top, heatMaps;
    /** Regions by start address, latest description wins; see {@link #regions}. */
    private final TreeMap<Long, Region> regions = new TreeMap<>();
    private final Map<String, Object> facts = new LinkedHashMap<>();
    /** Probes reach any mapped memory: every mapping counts as traced, as in the summary. */
    private final boolean compiledIn;
    /** The cache simulation behind the page's misses per source line and annotated source; null for none. */
    private CacheSimulation caches;
    private List<Path> sourceDirs = List.of();
    /** Whether the trace reached the program's end: what is live then was never freed. */
    private boolean atExit = true;

    private record Region(long start, long end, String name, boolean traced) {}

    /** {@code naming}: the stage's, read only (the stage keeps it current). */
    public Report(Naming naming, boolean compiledIn) {
        this.naming = naming;
        this.compiledIn = compiledIn;
        this.summary = new Summary(compiledIn);
        this.analysis = new ReportAnalysis(naming);
        facts.put("trace", compiledIn ? "compiled-in probes (memtrace cc)" : "page faults (memtrace run)");
    }

    /**
     * Have {@link #finish} write the page to {@code partial} and, once complete, rename it to {@code page}
     * (so that no page that looks finished is left behind by a failure); a null {@code page}: the caller
     * names it. Errors name the page {@code shown} (a user never typed the partial file's name).
     */
    public Report writeTo(Path partial, Path page, String shown, int top, int heatMaps) {
        this.partial = partial;
        this.page = page;
        this.shown = shown;
        this.top = top;
        this.heatMaps = heatMaps;
        return this;
    }

    /**
     * Also simulate {@code hierarchy} and show cachesim's counts per source line and the hottest files'
     * source annotated (docs/report.md, "Cache misses by source line"), relative source paths looked up in
     * {@code sourceDirs} first.
     */
    public Report simulate(CacheHierarchy hierarchy, List<Path> sourceDirs) {
        caches = new CacheSimulation(hierarchy, naming);
        this.sourceDirs = List.copyOf(sourceDirs);
        return this;
    }

    @Override
    public void access(Access access) {
        summary.access(access);
        analysis.access(access);
        if (caches != null) caches.access(access);
    }

    @Override
    public void block(long sequence, Event.Block block) {
        analysis.block(sequence, block);
        if (caches != null) caches.block(sequence, block);
    }

    @Override
    public void allocation(Allocation allocation) {
        summary.allocation(allocation);
        analysis.allocation(allocation);
    }

    @Override
    public void namesChanged() {
        analysis.namesChanged();
        if (caches != null) caches.namesChanged();
    }

    @Override
    public String name() { return "report"; }

    @Override
    public void finish(Ending ending) throws IOException {
        if (ending.elapsed() != null) fact("elapsed seconds", ending.elapsed().toNanos() / 1e9);
        if (ending.description() != null) fact("ending", ending.description());
        atExit = ending.cutShort() == null;
        if (partial == null) return;
        try {
            try (Writer w = Files.newBufferedWriter(partial, StandardCharsets.UTF_8)) {
                write(w, ending.events(), ending.lost(), top, heatMaps);
            }
            if (page != null) Files.move(partial, page, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            // the reason alone: a file system exception's message is the partial file's name
            throw new IOException("cannot write " + shown + ": " + IoReason.of(e), e);
        }
    }


    @Override
    public void fault(int tid, long ip, long address, boolean write) {
        summary.fault(tid, ip, address, write);
    }

    @Override
    public void probe(int tid, long address, Event.ProbeSite site) {
        summary.probe(tid, address, site);
    }

    @Override
    public void event(Event event) {
        summary.event(event);
        switch (event) {
            case Event.Hello h -> facts.putIfAbsent("pid", h.pid());
            case Event.Module m when !m.path().isEmpty() -> facts.putIfAbsent("program", m.path());
            case Event.Mapping m -> region(m.start(), m.end(), m.traced() || compiledIn);
            case Event.Range r when r.added() -> region(r.start(), r.end(), true);
            case Event.Exit x -> facts.put("ending", x.kind().name().toLowerCase(Locale.ROOT) + (x.kind() == Event.ExitKind.SIGNAL
                    ? " " + x.value() : x.kind() == Event.ExitKind.NORMAL ? " status " + x.value() : ""));
            default -> {}
        }
    }

    private void region(long start, long end, boolean traced) {
        // a new description replaces the ones it overlaps
        Map.Entry<Long, Region> before = regions.lowerEntry(start);
        if (before != null && before.getValue().end() > start) regions.remove(before.getKey());
        regions.subMap(start, end).clear();
        regions.put(start, new Region(start, end, naming.region(start), traced));
    }

    /** A fact of the run the trace does not hold (the command line, the elapsed time), shown as given. */
    public void fact(String name, Object value) {
        facts.put(name, value);
    }

    /** Writes the page; {@code events}: numbered events, {@code lost}: events the recorder dropped, {@code top}: rows per table. */
    void write(Writer out, long events, long lost, int top, int heatMaps) throws IOException {
        Map<String, Object> data = new LinkedHashMap<>();
        facts.put("threads", summary.threads());
        facts.put("events", events);
        data.put("facts", facts);
        // the page shows the counts under the words of memtrace's own summary (memoryRegions: memory regions)
        Map<String, Long> counts = new LinkedHashMap<>();
        summary.counts(lost).forEach((k, v) -> counts.put(Summary.label(k), v));
        data.put("summary", counts);
        data.put("heap", summary.heap().json(events, atExit));
        data.put("regions", regions());
        List<ReportAnalysis.Obj> hottest = analysis.hottestObjects(top);
        List<Map<String, Object>> objects = new ArrayList<>();
        List<Map<String, Object>> grids = new ArrayList<>();
        for (ReportAnalysis.Obj o : hottest) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("name", o.name);
            row.put("kind", o.kind.name().toLowerCase(Locale.ROOT));
            // two regions may share a name ([anon]); the start tells them apart
            row.put("start", o.kind == ReportAnalysis.Kind.UNKNOWN ? null : "0x" + Long.toHexString(o.start));
            row.put("site", o.site == null ? null : o.site.name);
            row.put("size", o.size == 0 ? null : o.size);
            row.put("allocated", o.allocated < 0 ? null : o.allocated);
            row.put("freed", o.freed < 0 ? null : o.freed);
            row.put("loads", o.loads);
            row.put("stores", o.stores);
            if (deep(o.stack)) row.put("stack", o.stack.names());
            objects.add(row);
            if (mapped(o) && grids.size() < heatMaps) grids.add(grid(o));
        }
        data.put("objects", objects);
        data.put("objectMaps", grids);
        data.put("instructions", analysis.hottestInstructions(top));
        List<Map<String, Object>> sites = new ArrayList<>();
        for (ReportAnalysis.Site s : analysis.sites(top)) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("site", s.name);
            row.put("blocks", s.blocks);
            row.put("bytes", s.bytes);
            row.put("maxLive", s.maxLive);
            row.put("readBytes", s.readBytes);
            row.put("writtenBytes", s.writtenBytes);
            if (deep(s.stack)) row.put("stack", s.stack.names());
            sites.add(row);
        }
        data.put("sites", sites);
        AllocationTree.Tree tree = AllocationTree.of(analysis.allSites());
        Map<String, Object> treeJson = AllocationTree.json(tree.root());
        if (tree.omittedPoints() > 0) {
            treeJson.put("omittedPoints", tree.omittedPoints());
            treeJson.put("omittedBytes", tree.omittedBytes());
        }
        data.put("allocationTree", treeJson);
        List<Map<String, Object>> freed = new ArrayList<>();
        for (ReportAnalysis.FreedAccess f : analysis.freedAccesses()) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("sequence", f.sequence());
            row.put("kind", f.store() ? "store" : "load");
            row.put("instruction", analysis.code(f.ip()));
            row.put("source", analysis.source(f.ip()));
            row.put("address", f.block() + "+" + f.offset());
            row.put("allocationSite", f.allocationSite());
            row.put("freeSite", f.freeSite());
            if (deep(f.allocationStack()) || deep(f.freeStack()) || deep(f.accessStack())) {
                row.put("allocationStack", f.allocationStack() == null ? null : f.allocationStack().names());
                row.put("freeStack", f.freeStack() == null ? null : f.freeStack().names());
                row.put("accessStack", f.accessStack() == null ? null : f.accessStack().names());
            }
            freed.add(row);
        }
        data.put("freedAccesses", freed);
        data.put("freedAccessCount", analysis.freedAccessCount());
        if (caches != null) data.put("cache", cache(top));
        String json = new ObjectMapper().writeValueAsString(data);
        // inside <script>, only "<" could end the element early; as \u003c it stays the same JSON string
        json = json.replace("<", "\\u003c");
        String page = template().replace("/*DATA*/null", json);
        out.write(page);
    }

    /**
     * The simulation's levels, the {@code top} source lines with the most misses and the hottest files'
     * annotated source; every count array is in {@link InstructionCounts}' order (loads, stores, first-level
     * load and store misses, last-level load and store misses).
     */
    private Map<String, Object> cache(int top) {
        Map<String, Object> c = new LinkedHashMap<>();
        List<LevelStats> levels = caches.levels();
        c.put("levels", levels.stream().map(l -> CacheSimulation.levelJson(l, true)).toList());
        c.put("lastLevel", levels.size() > 1 ? levels.getLast().name() : null);
        SourceAnnotation annotation = caches.annotation();
        c.put("total", annotation.total());
        c.put("withoutLine", annotation.withoutLine());
        c.put("lines", annotation.top(top));
        c.put("files", annotation.files(SourceAnnotation.FILES, sourceDirs));
        return c;
    }

    /** Fewer accesses than this make a few dots on a map: the table row says as much. */
    static final int MAP_MIN_ACCESSES = 8;

    /**
     * Whether {@code o} has a heat map worth drawing (docs/report.md, "Object heat maps"): its accesses fall
     * on two rows at least, and there are {@link #MAP_MIN_ACCESSES} of them. A scalar's all fall on one (its
     * offset 0), and its map would be one stripe saying what its table row says.
     */
    static boolean mapped(ReportAnalysis.Obj o) {
        return o.grid != null && o.accesses() >= MAP_MIN_ACCESSES && o.grid.rowsWithAccesses() >= 2;
    }

    /**
     * One object's map: its cells cut to the used columns and rows (row by row), the exact first and last
     * access and the object's start and size, so the page draws real axes and names the address under the
     * mouse.
     */
    private static Map<String, Object> grid(ReportAnalysis.Obj o) {
        Grid grid = o.grid;
        Map<String, Object> g = new LinkedHashMap<>();
        g.put("name", o.name);
        g.put("start", o.kind == ReportAnalysis.Kind.UNKNOWN ? null : "0x" + Long.toHexString(o.start));
        g.put("size", o.size == 0 ? null : o.size);
        g.put("columns", grid.usedColumns());
        g.put("rows", grid.usedRows(o.size));
        g.put("firstSequence", grid.firstSequence);
        g.put("lastSequence", grid.lastSequence);
        g.put("sequencesPerColumn", grid.sequencesPerColumn);
        g.put("bytesPerRow", grid.bytesPerRow);
        g.put("maxOffset", grid.maxOffset);
        g.put("reads", grid.trimmed(grid.reads, o.size));
        g.put("writes", grid.trimmed(grid.writes, o.size));
        return g;
    }

    /**
     * The page heat map's rows: every region that is traced or was touched, in address order, with its
     * touched pages as [page index, reads, writes]; touched pages outside any known region form regions
     * named [unknown] (one per run of consecutive pages).
     */
    private List<Map<String, Object>> regions() {
        TreeMap<Long, long[]> touched = new TreeMap<>();
        analysis.pages().forEach((page, r, w) -> touched.put(page, new long[] {r, w}));
        List<Region> shown = new ArrayList<>();
        for (Region r : regions.values())
            if (r.traced() || !touched.subMap(r.start() >>> 12, true, (r.end() - 1) >>> 12, true).isEmpty()) shown.add(r);
        long runStart = -1, runEnd = -1;
        for (long page : touched.keySet()) {
            Map.Entry<Long, Region> e = regions.floorEntry(page << 12);
            if (e != null && e.getValue().end() > page << 12) continue;
            if (page != runEnd) {
                if (runStart >= 0) shown.add(new Region(runStart << 12, runEnd << 12, "[unknown]", false));
                runStart = page;
            }
            runEnd = page + 1;
        }
        if (runStart >= 0) shown.add(new Region(runStart << 12, runEnd << 12, "[unknown]", false));
        shown.sort((a, b) -> Long.compareUnsigned(a.start(), b.start()));
        List<Map<String, Object>> rows = new ArrayList<>();
        for (Region r : shown) {
            long first = r.start() >>> 12, last = (r.end() - 1) >>> 12;
            List<long[]> marks = new ArrayList<>();
            for (Map.Entry<Long, long[]> e : touched.subMap(first, true, last, true).entrySet())
                marks.add(new long[] {e.getKey() - first, e.getValue()[0], e.getValue()[1]});
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", r.name());
            m.put("start", "0x" + Long.toHexString(r.start()));
            m.put("end", "0x" + Long.toHexString(r.end()));
            m.put("pages", last - first + 1);
            m.put("traced", r.traced());
            m.put("touched", marks);
            rows.add(m);
        }
        return foldUntouched(rows);
    }

    /** Runs of at least this many untouched regions of one name are one row of the page heat map. */
    static final int FOLDED_RUN = 16;

    /**
     * Rewrite mode leaves thousands of one-page stub mappings ({@code [anon]}) that nothing but the program's
     * patched code reads: python3's 8,562 drew one empty line each and made the page 1.9 MB and 18 s to
     * open. A run of {@link #FOLDED_RUN} or more untouched regions of one name, next to each other in address
     * order, is one row saying how many regions and pages it holds (with {@code regions}, and no marks).
     */
    static List<Map<String, Object>> foldUntouched(List<Map<String, Object>> rows) {
        List<Map<String, Object>> out = new ArrayList<>();
        int i = 0;
        while (i < rows.size()) {
            int j = i;
            while (j < rows.size() && untouched(rows.get(j)) && rows.get(j).get("name").equals(rows.get(i).get("name"))) j++;
            if (j - i < FOLDED_RUN) {
                out.add(rows.get(i));
                i++;
                continue;
            }
            Map<String, Object> m = new LinkedHashMap<>(rows.get(i));
            long pages = 0;
            for (Map<String, Object> r : rows.subList(i, j)) pages += (Long) r.get("pages");
            m.put("end", rows.get(j - 1).get("end"));
            m.put("pages", pages);
            m.put("regions", j - i);
            out.add(m);
            i = j;
        }
        return out;
    }

    private static boolean untouched(Map<String, Object> row) {
        return ((List<?>) row.get("touched")).isEmpty();
    }

    private static String template() throws IOException {
        try (InputStream in = Report.class.getResourceAsStream("report.html")) {
            if (in == null) throw new IOException("the report template is missing from memtrace's jar");
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /**
     * A stack that tells more than the call site's name: more frames, or the site's own source line
     * ({@code main+88(cxx.cpp:12)}, what memcheck prints under "allocated at"). A stack no interpretation named
     * (traces of depth 1) has no names and reads as before.
     */
    private static boolean deep(org.memtrace.analysis.Stack stack) {
        return stack != null && (stack.deep() || stack.names().size() == 1 && stack.names().get(0).endsWith(")"));
    }
}
