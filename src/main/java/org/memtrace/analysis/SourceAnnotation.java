package org.memtrace.analysis;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongUnaryOperator;
import org.memtrace.trace.Naming;

/**
 * cg_annotate's views of a cache simulation: the six data counts of {@link InstructionCounts} added up per
 * source line ({@code file:line} of the DWARF line table, {@link Naming#source}), the hottest lines, and the
 * hottest files' text with the counts beside the lines that have them (docs/cachesim.md, "Annotated
 * source"). Bounded so that the report stays small: {@link #FILES} files, in each the {@link #ANCHORS}
 * hottest lines with {@link #CONTEXT} lines either side, lines cut at {@link #WIDTH} characters.
 */
public final class SourceAnnotation {
    /** Files annotated, hottest first. */
    public static final int FILES = 5;
    /** Lines of a file whose neighbourhood is shown, its hottest. */
    static final int ANCHORS = 30;
    /** Lines shown either side of a hot line, as cg_annotate's default. */
    static final int CONTEXT = 8;
    /** Characters of a source line kept. */
    static final int WIDTH = 300;
    /** Larger files are not read (a generated file, or not source at all). */
    static final long MAX_BYTES = 16L << 20;

    /** One source line's counts (indexed as {@link InstructionCounts}). */
    public record Line(String file, int line, long[] counts) {
        public long firstLevelMisses() { return counts[InstructionCounts.L1_LOAD_MISSES] + counts[InstructionCounts.L1_STORE_MISSES]; }

        public long lastLevelMisses() { return counts[InstructionCounts.LL_LOAD_MISSES] + counts[InstructionCounts.LL_STORE_MISSES]; }

        public long accesses() { return counts[InstructionCounts.LOADS] + counts[InstructionCounts.STORES]; }

        public String name() { return file + ':' + line; }
    }

    /** A run of consecutive source lines from {@code first} on; {@code counts} by line number, for the lines that have any. */
    public record Chunk(int first, List<String> text, Map<Integer, long[]> counts) {}

    /**
     * One annotated file: its counts summed, and either its chunks or, in {@code problem}, why its text is
     * not shown (not found, not readable...); {@code problem} also says when the file is shorter than the
     * line table says (edited since it was compiled).
     */
    public record AnnotatedFile(String path, long[] totals, String problem, List<Chunk> chunks) {}

    /** Hottest first: L1 misses, then last-level misses, then accesses, then name. */
    static final Comparator<Line> HOTTEST = Comparator.comparingLong(Line::firstLevelMisses).reversed()
            .thenComparing(Comparator.comparingLong(Line::lastLevelMisses).reversed())
            .thenComparing(Comparator.comparingLong(Line::accesses).reversed())
            .thenComparing(Line::file).thenComparingInt(Line::line);

    private final List<Line> lines;
    private final Naming naming;
    private final long[] withoutLine = new long[InstructionCounts.COUNTS];
    private final long[] total = new long[InstructionCounts.COUNTS];

    /**
     * Adds every instruction's counts to its line; instructions without one to {@link #withoutLine}.
     * {@code lineAddress}: where a key of {@code counts} has its line (a call's return address a byte before).
     */
    public SourceAnnotation(InstructionCounts counts, Naming naming, LongUnaryOperator lineAddress) {
        this.naming = naming;
        Map<String, long[]> byLine = new HashMap<>();
        counts.forEach((ip, c) -> {
            add(total, c);
            String source = naming.source(lineAddress.applyAsLong(ip));
            int colon = source == null ? -1 : source.lastIndexOf(':');
            add(colon < 0 ? withoutLine : byLine.computeIfAbsent(source, k -> new long[InstructionCounts.COUNTS]), c);
        });
        List<Line> all = new ArrayList<>();
        byLine.forEach((s, c) -> {
            int colon = s.lastIndexOf(':');
            all.add(new Line(s.substring(0, colon), Integer.parseInt(s.substring(colon + 1)), c));
        });
        all.sort(HOTTEST);
        lines = List.copyOf(all);
    }

    private static void add(long[] sum, long[] counts) {
        for (int i = 0; i < sum.length; i++) sum[i] += counts[i];
    }

    /** The {@code n} hottest lines. */
    public List<Line> top(int n) {
        return lines.size() > n ? lines.subList(0, n) : lines;
    }

    /** The counts of instructions that have no source line (no {@code -g}, or outside any module): cg_annotate's {@code ???}. */
    public long[] withoutLine() { return withoutLine.clone(); }

    /** The counts of every instruction. */
    public long[] total() { return total.clone(); }

    /**
     * The {@code n} hottest files (by the sum of their lines, ordered as lines are), each annotated; a path
     * relative to the compilation directory is looked up in {@code sourceDirs}, then in that directory when the
     * debug information names it ({@link Naming#sourceLocation}), then in the current directory.
     */
    public List<AnnotatedFile> files(int n, List<Path> sourceDirs) {
        Map<String, List<Line>> byFile = new LinkedHashMap<>();
        for (Line l : lines) byFile.computeIfAbsent(l.file(), k -> new ArrayList<>()).add(l);
        List<Line> sums = new ArrayList<>();
        byFile.forEach((file, ls) -> {
            long[] sum = new long[InstructionCounts.COUNTS];
            for (Line l : ls) add(sum, l.counts());
            sums.add(new Line(file, 0, sum));
        });
        sums.sort(HOTTEST);
        List<AnnotatedFile> files = new ArrayList<>();
        for (Line f : sums.subList(0, Math.min(n, sums.size()))) files.add(annotate(f.file(), f.counts(), byFile.get(f.file()), sourceDirs, naming.sourceLocation(f.file())));
        return files;
    }

    /** {@code hot}: the file's lines with counts, hottest first. */
    private static AnnotatedFile annotate(String file, long[] totals, List<Line> hot, List<Path> sourceDirs, String location) {
        List<String> text;
        try {
            text = read(Path.of(file), sourceDirs, location);
        } catch (IOException e) {
            return new AnnotatedFile(file, totals, e.getMessage(), List.of());
        }
        Map<Integer, long[]> counts = new HashMap<>();
        for (Line l : hot) counts.put(l.line(), l.counts());
        // the hottest lines' neighbourhoods, merged where they touch
        TreeMap<Integer, Integer> ranges = new TreeMap<>();
        for (Line l : hot.subList(0, Math.min(ANCHORS, hot.size()))) ranges.put(Math.max(1, l.line() - CONTEXT), l.line() + CONTEXT);
        List<Chunk> chunks = new ArrayList<>();
        int start = -1, end = -1;
        for (Map.Entry<Integer, Integer> r : ranges.entrySet()) {
            if (start >= 0 && r.getKey() <= end + 1) {
                end = Math.max(end, r.getValue());
                continue;
            }
            if (start >= 0) chunks.add(chunk(text, counts, start, end));
            start = r.getKey();
            end = r.getValue();
        }
        if (start >= 0) chunks.add(chunk(text, counts, start, end));
        // a hot line past the end of the file (edited since) leaves context with no counted line: not shown
        chunks.removeIf(c -> c.counts().isEmpty());
        int last = hot.stream().mapToInt(Line::line).max().orElse(0);
        String problem = last > text.size()
                ? "the file has " + text.size() + " lines but the line table names line " + last + ": it changed since it was compiled"
                : null;
        return new AnnotatedFile(file, totals, problem, chunks);
    }

    private static Chunk chunk(List<String> text, Map<Integer, long[]> counts, int first, int last) {
        List<String> shown = new ArrayList<>();
        Map<Integer, long[]> shownCounts = new TreeMap<>();
        for (int line = first; line <= Math.min(last, text.size()); line++) {
            String s = text.get(line - 1);
            shown.add(s.length() > WIDTH ? s.substring(0, WIDTH) + "…" : s);
            if (counts.containsKey(line)) shownCounts.put(line, counts.get(line));
        }
        return new Chunk(first, shown, shownCounts);
    }

    /**
     * The file's lines, or an exception whose message says in words why not. A path the line table gives
     * relative to the compilation directory is looked up in {@code sourceDirs} (cg_annotate's {@code -I}),
     * then at {@code location} (the compilation directory joined, or null), then in the current directory.
     * Only regular files are read: a trace's debug information could name a
     * FIFO or a device, which would block or never end (docs/trust.md).
     */
    static List<String> read(Path path, List<Path> sourceDirs, String location) throws IOException {
        String shown = "";
        if (!path.isAbsolute()) {
            List<String> places = new ArrayList<>();
            if (!sourceDirs.isEmpty()) places.add("--source-dir");
            if (location != null) places.add(location);
            places.add("the current directory");
            String last = places.removeLast();
            shown = " (relative to the compilation directory; looked up in " + (places.isEmpty() ? "" : String.join(", ", places) + " and ")
                    + last + ")";
            List<Path> candidates = new ArrayList<>();
            for (Path d : sourceDirs) candidates.add(d.resolve(path));
            if (location != null) candidates.add(Path.of(location));
            for (Path c : candidates) {
                if (!Files.exists(c)) continue;
                path = c;
                break;
            }
        }
        if (!Files.exists(path)) throw new IOException("not found" + shown);
        if (!Files.isRegularFile(path)) throw new IOException("not a regular file");
        if (!Files.isReadable(path)) throw new IOException("not readable");
        if (Files.size(path) > MAX_BYTES) throw new IOException("larger than " + (MAX_BYTES >> 20) + " MiB: not read");
        return new String(Files.readAllBytes(path), StandardCharsets.UTF_8).lines().toList();
    }

    /**
     * The annotation as cg_annotate prints it: per file a header, then the counts (load and store accesses,
     * first- and last-level misses of each; {@code .} for none) beside each line, {@code -- line N --}
     * where a chunk starts. {@code ll}: the last level's name, or null with one level (its columns left out).
     */
    public static void print(PrintWriter out, List<AnnotatedFile> files, String ll) {
        String[] headings = ll == null ? new String[] {"Dr", "Dw", "L1mr", "L1mw"}
                : new String[] {"Dr", "Dw", "L1mr", "L1mw", ll + "mr", ll + "mw"};
        int[] order = {InstructionCounts.LOADS, InstructionCounts.STORES, InstructionCounts.L1_LOAD_MISSES,
                InstructionCounts.L1_STORE_MISSES, InstructionCounts.LL_LOAD_MISSES, InstructionCounts.LL_STORE_MISSES};
        String rule = "-".repeat(80);
        if (files.isEmpty()) out.printf("%n(no source to annotate: no instruction has a line; build with -g)%n");
        for (AnnotatedFile f : files) {
            out.println();
            out.println(rule);
            out.println("-- annotated source: " + f.path());
            out.println(rule);
            if (f.problem() != null) out.println("  " + (f.chunks().isEmpty() ? "source not shown: " : "note: ") + f.problem());
            StringBuilder h = new StringBuilder();
            for (String s : headings) h.append(String.format(Locale.ROOT, "%12s", s));
            out.println(h);
            out.println(row(f.totals(), order, headings.length) + "  (file total)");
            for (Chunk c : f.chunks()) {
                out.println();
                out.println(" ".repeat(12 * headings.length) + "  -- line " + c.first() + " " + "-".repeat(20));
                for (int i = 0; i < c.text().size(); i++) {
                    long[] counts = c.counts().get(c.first() + i);
                    out.println((counts == null ? row(new long[InstructionCounts.COUNTS], order, headings.length)
                            : row(counts, order, headings.length)) + "  " + c.text().get(i));
                }
            }
        }
    }

    private static String row(long[] counts, int[] order, int columns) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < columns; i++) {
            long v = counts[order[i]];
            b.append(v == 0 ? String.format(Locale.ROOT, "%12s", ".") : String.format(Locale.ROOT, "%,12d", v));
        }
        return b.toString();
    }

    /** The counts as JSON fields, named as cachesim's JSON names them. */
    public static Map<String, Long> json(long[] counts) {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("loads", counts[InstructionCounts.LOADS]);
        m.put("stores", counts[InstructionCounts.STORES]);
        m.put("l1LoadMisses", counts[InstructionCounts.L1_LOAD_MISSES]);
        m.put("l1StoreMisses", counts[InstructionCounts.L1_STORE_MISSES]);
        m.put("llLoadMisses", counts[InstructionCounts.LL_LOAD_MISSES]);
        m.put("llStoreMisses", counts[InstructionCounts.LL_STORE_MISSES]);
        return m;
    }
}
