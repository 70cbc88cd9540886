package org.memtrace.instrument;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.memtrace.select.BasicBlock;
import org.memtrace.select.BlockModel;
import org.memtrace.select.FunctionModel;
import org.memtrace.x86.Flow;
import org.memtrace.x86.Instruction;

/** Which positions of a loop's body run in every iteration: the dominators of its latch, in one pass. */
final class Dominance {
    private Dominance() {
    }

    /**
     * Which body positions run every iteration: those of the blocks that dominate the last block of the
     * iteration order and every block that ends in a {@code continue} (a jump back to the body's start, which
     * ends its iteration early). The body's other jumps all go forward in that order (checked by
     * {@link #shape}), so a block's predecessors come before it and one pass in order computes the dominators.
     */
    static boolean[] always(Candidate c, FunctionModel model) {
        List<FunctionPlanner.Decoded> body = c.order();
        Map<Long, Integer> position = new HashMap<>();
        for (int p = 0; p < body.size(); p++) position.put(body.get(p).instruction().address(), p);
        long end = body.getLast().instruction().address();
        List<BasicBlock> blocks = new ArrayList<>();
        for (BlockModel b : model.blocks()) if (position.containsKey(b.block().start())) blocks.add(b.block());
        blocks.sort(Comparator.comparingInt(b -> position.get(b.start())));
        Map<Long, Integer> byStart = new HashMap<>();
        for (int b = 0; b < blocks.size(); b++) byStart.put(blocks.get(b).start(), b);
        // the block that follows a block in the function by address (whatever padding lies between), by its last instruction
        List<BasicBlock> all = new ArrayList<>();
        for (BlockModel b : model.blocks()) all.add(b.block());
        all.sort(Comparator.comparingLong(BasicBlock::start));
        Map<Long, Long> following = new HashMap<>();
        for (int b = 0; b + 1 < all.size(); b++) following.put(all.get(b).instructions().getLast().address(), all.get(b + 1).start());
        BitSet[] dom = new BitSet[blocks.size()];
        List<List<Integer>> preds = new ArrayList<>();
        for (int b = 0; b < blocks.size(); b++) preds.add(new ArrayList<>());
        for (int b = 0; b < blocks.size(); b++) {
            Instruction last = blocks.get(b).instructions().getLast();
            if (last.address() == end) continue; // the loop's own jump
            if (last.flow() != Flow.JUMP) {
                Integer next = byStart.get(last.nextAddress());
                // an inner loop's header is aligned: padding lies between the code before it and its label
                if (next == null) next = byStart.get(following.getOrDefault(last.address(), -1L));
                if (next != null) preds.get(next).add(b);
            }
            if (last.flow() != Flow.CALL && last.branchTarget().isPresent()) {
                Integer t = byStart.get(last.branchTarget().getAsLong());
                if (t != null && t > b) preds.get(t).add(b); // a back edge (an inner loop's, a continue's) decides no dominator
            }
        }
        for (int b = 0; b < blocks.size(); b++) {
            var d = new BitSet();
            if (b > 0) {
                boolean any = false;
                for (int p : preds.get(b)) {
                    if (!any) d.or(dom[p]); else d.and(dom[p]);
                    any = true;
                }
            }
            d.set(b);
            dom[b] = d;
        }
        BitSet latch = (BitSet) dom[blocks.size() - 1].clone();
        long start = body.getFirst().instruction().address();
        for (int b = 0; b < blocks.size(); b++) {
            Instruction last = blocks.get(b).instructions().getLast();
            if (last.address() != end && last.flow() != Flow.CALL && last.branchTarget().isPresent()
                    && last.branchTarget().getAsLong() == start) latch.and(dom[b]);
        }
        boolean[] runs = new boolean[body.size()];
        for (int b = 0; b < blocks.size(); b++) {
            if (!latch.get(b)) continue;
            for (Instruction i : blocks.get(b).instructions()) runs[position.get(i.address())] = true;
        }
        return runs;
    }
}
