package org.memtrace.report;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * dh_view's tree of program points (docs/report.md, "Allocation tree"): every allocation stack, read from its
 * innermost frame (the call of the allocator) outwards, merged where stacks share frames. The root holds all
 * allocations; its children split them by call site, theirs by the caller of that, and so on, so the first
 * split a user sees is the one that accounts for the most bytes. A chain of nodes with one child each is one
 * node with several frames (as dh_view prints it). A node's counts are the sums over the program points below
 * it, except the most bytes live at once, which is given for a program point only: the maxima of two points
 * need not fall at the same moment, so their sum says nothing.
 */
final class AllocationTree {
    /** Program points past this many (the smallest by bytes) are left out, and counted, to keep the page small. */
    static final int MAX_POINTS = 10_000;

    /**
     * A node: the frames it adds below its parent (innermost first), the sums over the program points below,
     * {@code maxLive} for a program point (-1 for a node that is not one), and the children, most bytes first.
     */
    record Node(List<String> frames, long blocks, long bytes, long readBytes, long writtenBytes, long maxLive, int programPoints,
                List<Node> children) {}

    /** The tree and what did not fit in it. */
    record Tree(Node root, int omittedPoints, long omittedBytes) {}

    private static final class Trie {
        final List<String> frames = new ArrayList<>();
        final Map<String, Trie> children = new LinkedHashMap<>();
        /** The program points ending here: usually none or one (two stacks named alike in two modules are one). */
        final List<ReportAnalysis.Site> own = new ArrayList<>();
    }

    private AllocationTree() {}

    /** The tree of {@code sites}, each one a program point (the site alone when stacks were not recorded). */
    static Tree of(Collection<ReportAnalysis.Site> sites) {
        List<ReportAnalysis.Site> points = new ArrayList<>(sites);
        points.sort((a, b) -> Long.compare(b.bytes, a.bytes));
        int omitted = Math.max(0, points.size() - MAX_POINTS);
        long omittedBytes = 0;
        for (ReportAnalysis.Site s : points.subList(points.size() - omitted, points.size())) omittedBytes += s.bytes;
        Trie root = new Trie();
        for (ReportAnalysis.Site s : points.subList(0, points.size() - omitted)) {
            Trie at = root;
            for (String frame : frames(s)) {
                at = at.children.computeIfAbsent(frame, f -> {
                    Trie t = new Trie();
                    t.frames.add(f);
                    return t;
                });
            }
            at.own.add(s);
        }
        return new Tree(node(root, true), omitted, omittedBytes);
    }

    /** The stack's frames as the trace names them, or the site alone at depth 1. */
    private static List<String> frames(ReportAnalysis.Site s) {
        return s.stack != null && !s.stack.names().isEmpty() ? s.stack.names() : List.of(s.name);
    }

    private static Node node(Trie t, boolean root) {
        List<String> frames = new ArrayList<>(t.frames);
        // a chain without branches or points of its own is one node (the root keeps its place: it has no frames)
        while (!root && t.own.isEmpty() && t.children.size() == 1) {
            t = t.children.values().iterator().next();
            frames.addAll(t.frames);
        }
        long blocks = 0, bytes = 0, read = 0, written = 0, maxLive = t.own.isEmpty() ? -1 : 0;
        int points = t.own.size();
        for (ReportAnalysis.Site s : t.own) {
            blocks += s.blocks;
            bytes += s.bytes;
            read += s.readBytes;
            written += s.writtenBytes;
            maxLive += s.maxLive;
        }
        List<Node> children = new ArrayList<>();
        for (Trie c : t.children.values()) {
            Node n = node(c, false);
            children.add(n);
            blocks += n.blocks();
            bytes += n.bytes();
            read += n.readBytes();
            written += n.writtenBytes();
            points += n.programPoints();
        }
        children.sort((a, b) -> Long.compare(b.bytes(), a.bytes()));
        return new Node(List.copyOf(frames), blocks, bytes, read, written, maxLive, points, List.copyOf(children));
    }

    /** The page's JSON of a node; a program point's {@code maxLive} only, and {@code children} only when there are some. */
    static Map<String, Object> json(Node n) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("frames", n.frames());
        m.put("blocks", n.blocks());
        m.put("bytes", n.bytes());
        m.put("readBytes", n.readBytes());
        m.put("writtenBytes", n.writtenBytes());
        if (n.maxLive() >= 0) m.put("maxLive", n.maxLive());
        m.put("programPoints", n.programPoints());
        if (!n.children().isEmpty()) m.put("children", n.children().stream().map(AllocationTree::json).toList());
        return m;
    }
}
