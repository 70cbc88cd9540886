package org.memtrace.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.memtrace.analysis.Stack;

class AllocationTreeTest {
    private static ReportAnalysis.Site point(long bytes, long blocks, long maxLive, long read, long written, String... frames) {
        ReportAnalysis.Site s = new ReportAnalysis.Site(frames[0]);
        s.stack = frames.length > 1 ? new Stack(1, new long[frames.length], List.of(frames)) : null;
        s.bytes = bytes;
        s.blocks = blocks;
        s.maxLive = maxLive;
        s.readBytes = read;
        s.writtenBytes = written;
        return s;
    }

    @Test
    void stacksMergeFromTheAllocatorCallOutwardsAndChainsBecomeOneNode() {
        // stacks.c's two program points: one wrapper called from two functions
        AllocationTree.Tree t = AllocationTree.of(List.of(
                point(16, 1, 16, 4, 16, "xmalloc+24(stacks.c:7)", "make_left+14(stacks.c:17)", "main+13(stacks.c:29)"),
                point(32, 1, 32, 0, 4, "xmalloc+24(stacks.c:7)", "make_right+14(stacks.c:22)", "main+22(stacks.c:30)")));
        AllocationTree.Node root = t.root();
        assertThat(root.frames()).isEmpty();
        assertThat(root.bytes()).isEqualTo(48);
        assertThat(root.blocks()).isEqualTo(2);
        assertThat(root.readBytes()).isEqualTo(4);
        assertThat(root.writtenBytes()).isEqualTo(20);
        assertThat(root.programPoints()).isEqualTo(2);
        assertThat(root.maxLive()).as("the sum of two maxima is no maximum").isEqualTo(-1);
        assertThat(root.children()).hasSize(1);
        AllocationTree.Node wrapper = root.children().get(0);
        assertThat(wrapper.frames()).containsExactly("xmalloc+24(stacks.c:7)");
        assertThat(wrapper.maxLive()).isEqualTo(-1);
        // the bigger point first; each chain of single children is one node of two frames
        assertThat(wrapper.children()).extracting(AllocationTree.Node::frames).containsExactly(
                List.of("make_right+14(stacks.c:22)", "main+22(stacks.c:30)"),
                List.of("make_left+14(stacks.c:17)", "main+13(stacks.c:29)"));
        assertThat(wrapper.children()).extracting(AllocationTree.Node::maxLive).containsExactly(32L, 16L);
        assertThat(wrapper.children()).allSatisfy(n -> assertThat(n.children()).isEmpty());
        assertThat(t.omittedPoints()).isZero();
    }

    @Test
    void aShorterStackIsAPointInsideTheLongerOnesNode() {
        // the frame-pointer walk ended early for one call: its stack is a prefix of the other's
        AllocationTree.Node root = AllocationTree.of(List.of(
                point(100, 2, 60, 0, 0, "f+5", "g+9"),
                point(10, 1, 10, 0, 0, "f+5", "g+9", "main+3"))).root();
        AllocationTree.Node g = root.children().get(0);
        assertThat(g.frames()).containsExactly("f+5", "g+9");
        assertThat(g.bytes()).isEqualTo(110);
        assertThat(g.maxLive()).as("its own point's").isEqualTo(60);
        assertThat(g.programPoints()).isEqualTo(2);
        assertThat(g.children()).singleElement().satisfies(n -> assertThat(n.frames()).containsExactly("main+3"));
    }

    @Test
    void withoutStacksEachSiteIsAChildOfTheRoot() {
        AllocationTree.Node root = AllocationTree.of(List.of(point(8, 1, 8, 0, 0, "a+1"), point(80, 10, 16, 0, 0, "b+2"))).root();
        assertThat(root.children()).extracting(AllocationTree.Node::frames).containsExactly(List.of("b+2"), List.of("a+1"));
        assertThat(AllocationTree.json(root).get("children")).asList().hasSize(2);
        assertThat(AllocationTree.json(root)).doesNotContainKey("maxLive").containsEntry("bytes", 88L);
    }

    @Test
    void theSmallestPointsPastTheLimitAreCountedNotDrawn() {
        List<ReportAnalysis.Site> many = new java.util.ArrayList<>();
        for (int i = 0; i < AllocationTree.MAX_POINTS + 3; i++) many.add(point(1000 + i, 1, 1, 0, 0, "s" + i));
        AllocationTree.Tree t = AllocationTree.of(many);
        assertThat(t.omittedPoints()).isEqualTo(3);
        assertThat(t.omittedBytes()).isEqualTo(1000 + 1001 + 1002);
        assertThat(t.root().programPoints()).isEqualTo(AllocationTree.MAX_POINTS);
    }
}
