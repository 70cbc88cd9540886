package org.memtrace.analysis;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * DHAT's program points: the heap totals per allocation stack (docs/stacks.md). Two blocks belong to one point
 * when their allocation calls had the same return addresses, to {@code --stack-depth} frames; at depth 1 a
 * point is a call site. Counted as {@link HeapTotals} counts: the malloc family, bytes as requested.
 */
final class ProgramPoints {
    /** How many points the summary and the JSON list, the most bytes first. */
    static final int LISTED = 10;

    private static final class Point {
        final Stack stack;
        long blocks, bytes, liveBlocks, liveBytes;
        Point(Stack stack) { this.stack = stack; }
    }

    private final Map<Integer, Point> points = new HashMap<>();
    /** Whether some stack has more than the call site: only then are points listed (depth 1 prints as before). */
    private boolean deep;

    void allocated(Stack stack, long bytes) {
        Point p = points.computeIfAbsent(stack.id(), id -> new Point(stack));
        p.blocks++;
        p.bytes += bytes;
        p.liveBlocks++;
        p.liveBytes += bytes;
        if (stack.deep()) deep = true;
    }

    void released(Stack stack, long bytes) {
        Point p = points.get(stack.id());
        if (p == null) return;
        p.liveBlocks--;
        p.liveBytes -= bytes;
    }

    int size() { return points.size(); }

    boolean shown() { return deep; }

    private List<Point> ranked() {
        List<Point> all = new ArrayList<>(points.values());
        all.sort(Comparator.comparingLong((Point p) -> -p.bytes).thenComparingInt(p -> p.stack.id()));
        return all;
    }

    /** The summary's lines: how many points, then the largest, each with its stack innermost first. */
    void print(PrintWriter out) {
        if (!deep) return;
        out.printf(Locale.ROOT, "    %-24s %,13d allocation stacks (DHAT's program points), the most bytes first:%n", "program points", points.size());
        List<Point> ranked = ranked();
        for (Point p : ranked.subList(0, Math.min(LISTED, ranked.size()))) {
            out.printf(Locale.ROOT, "      %,d block%s %,d bytes, %,d live at end%n", p.blocks, p.blocks == 1 ? "" : "s", p.bytes, p.liveBytes);
            for (String frame : p.stack.names()) out.printf(Locale.ROOT, "        at %s%n", frame);
        }
    }

    /** The points for the JSON summary, the most bytes first, at most {@link #LISTED}; null when not shown. */
    List<Map<String, Object>> json() {
        if (!deep) return null;
        List<Map<String, Object>> list = new ArrayList<>();
        List<Point> ranked = ranked();
        for (Point p : ranked.subList(0, Math.min(LISTED, ranked.size()))) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("blocks", p.blocks);
            m.put("bytes", p.bytes);
            m.put("liveBlocksAtEnd", p.liveBlocks);
            m.put("liveBytesAtEnd", p.liveBytes);
            m.put("stack", p.stack.names());
            list.add(m);
        }
        return list;
    }
}
