package org.memtrace.instrument;

import java.util.List;
import org.memtrace.instrument.LoopSkeleton.Reason;

/**
 * Where a candidate loop's code lies and how it is run. {@code order}: the body in iteration order (from
 * the instruction an iteration starts with to the jump that ends it); the code indices {@code first} …
 * {@code last} hold it, in address order. {@code entryJump}: the index of the jump outside the body that
 * enters it (-1 when the loop is entered by falling into its first instruction). {@code exit}: the
 * position in the order of the one jump that leaves the loop: the last one, or the test that starts
 * every iteration (a loop tested at the top, -Os), whose code before it only compares registers.
 * {@code exitTaken}: that jump leaves the loop when taken (else by falling through). {@code mayBeEmpty}:
 * a run can end at the loop's test before any iteration's body. {@code declined}: why a loop of a known
 * shape cannot be followed anyway, or null. {@code entryAt}: the address the entry jump goes to when the
 * first iteration starts there, in the middle of the body (-1: at the body's first instruction, or at a
 * test that only compares); {@code entryTaken}: that jump is conditional.
 */
record Candidate(List<FunctionPlanner.Decoded> order, int first, int last, int entryJump, int entryInstruction,
                         int exit, boolean exitTaken, boolean mayBeEmpty, Reason declined, long entryAt, boolean entryTaken) {
    Candidate(List<FunctionPlanner.Decoded> order, int first, int last, int entryJump, int entryInstruction,
              int exit, boolean exitTaken, boolean mayBeEmpty, Reason declined) {
        this(order, first, last, entryJump, entryInstruction, exit, exitTaken, mayBeEmpty, declined, -1, false);
    }

    FunctionPlanner.Decoded end() { return order.get(exit); }
}
