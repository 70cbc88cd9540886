package org.memtrace.mtr;

import org.memtrace.format.SkeletonFormat;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.memtrace.event.Event;

/** The replay's arithmetic and its order against logged records, on hand-made loop descriptions. */
class LoopReplayTest {
    private static final int NONE = 0xff;
    private static final long LOGGED_IP = 0x4000;

    /** Position 0: load 8(base); 1: a logged site; 2: store (base,index,4), after both registers stepped (phase 3). */
    private static SkeletonTable.Placed loop(long indexStep, int indexStepSlot) {
        var totals = new Event.SelectionTotals(0, 0, 0);
        Event.ProbeSite load = new Event.ProbeSite(0x1000, Event.ProbeKind.LOAD, 8, 0, Event.ProbeSite.COMPUTED, 1, 1, 0, 0, 0, totals);
        Event.ProbeSite store = new Event.ProbeSite(0x2000, Event.ProbeKind.STORE, 4, 0, Event.ProbeSite.COMPUTED, 1, 1, 0, 0, 0, totals);
        // slots: 0 base (step 16), 1 index (step indexStep [+ slot]), 2 a stride register (invariant)
        return new SkeletonTable.Placed(new long[] {16, indexStep, 0}, new int[] {NONE, indexStepSlot, NONE}, 0,
                new int[] {0, NONE, 0}, new int[] {NONE, NONE, 1}, new int[] {1, 1, 4}, new int[] {0, 0, 3},
                new long[] {8, 0, 0}, new Event.ProbeSite[] {load, null, store}, new long[] {0x1000, LOGGED_IP, 0x2000}, true,
                new int[3], new int[0], new boolean[0], new boolean[0], false, false);
    }

    private record Out(long address, long ip) {}

    @Test
    void computedAccessesComeInProgramOrderAroundTheLoggedOnes() {
        LoopReplay r = new LoopReplay(loop(1, NONE));
        r.value(0, 1000);
        r.value(1, 5);
        r.value(2, 0);
        List<Out> out = new ArrayList<>();
        LoopReplay.Sink sink = (a, s) -> out.add(new Out(a, s.ip()));
        assertThat(r.logged(LOGGED_IP, sink)).isTrue();
        assertThat(out).containsExactly(new Out(1008, 0x1000));
        assertThat(r.logged(LOGGED_IP, sink)).isTrue();
        // the base is 1000 + 16 at the store (its update came first); the index 5 + 1
        assertThat(out).containsExactly(new Out(1008, 0x1000), new Out(1016 + 24, 0x2000), new Out(1024, 0x1000));
        out.clear();
        // two iterations (as many as logged records): the base ends at 1000 + 2 * 16
        assertThat(r.exit(1032, sink)).isTrue();
        assertThat(out).containsExactly(new Out(1032 + 28, 0x2000));
    }

    /**
     * A loop entered in the middle (gcc's {@code jmp .Ltest}): body {@code 0: store (r); 1: add $8, r; 2: load
     * (r)} entered at position 2. The first iteration runs the load alone, with r as logged at the entry; then
     * whole iterations. Three runs of the load and two of the store: r goes from 1000 to 1016.
     */
    @Test
    void aLoopEnteredInTheMiddleStartsItsFirstIterationThere() {
        var totals = new Event.SelectionTotals(0, 0, 0);
        Event.ProbeSite store = new Event.ProbeSite(0x1000, Event.ProbeKind.STORE, 8, 0, Event.ProbeSite.COMPUTED, 1, 1, 0, 0, 0, totals);
        Event.ProbeSite load = new Event.ProbeSite(0x2000, Event.ProbeKind.LOAD, 8, 0, Event.ProbeSite.COMPUTED, 1, 1, 0, 0, 0, totals);
        var loop = new SkeletonTable.Placed(new long[] {8}, new int[] {NONE}, 0, new int[] {0, 0}, new int[] {NONE, NONE},
                new int[] {1, 1}, new int[] {0, 1}, new long[] {0, 0}, new Event.ProbeSite[] {store, load}, new long[] {0x1000, 0x2000},
                false, new int[2], new int[0], new boolean[0], new boolean[0], true, false, new boolean[2], new long[0], 0, false,
                1, 1);
        List<Out> out = new ArrayList<>();
        LoopReplay r = new LoopReplay(loop).start();
        r.value(0, 1000);
        assertThat(r.exit(1016, (a, s) -> out.add(new Out(a, s.ip())))).isTrue();
        assertThat(out).containsExactly(new Out(1000, 0x2000), new Out(1000, 0x1000), new Out(1008, 0x2000),
                new Out(1008, 0x1000), new Out(1016, 0x2000));
    }

    /** Entered at a test past the body's last access (it steps the counter, reads nothing): iteration 0 holds no access. */
    @Test
    void aLoopEnteredPastItsLastAccessBeginsWithAnEmptyIteration() {
        var totals = new Event.SelectionTotals(0, 0, 0);
        Event.ProbeSite store = new Event.ProbeSite(0x1000, Event.ProbeKind.STORE, 8, 0, Event.ProbeSite.COMPUTED, 1, 1, 0, 0, 0, totals);
        // body: 0: store (r); then r += 8 and the test, where the run enters
        var loop = new SkeletonTable.Placed(new long[] {8}, new int[] {NONE}, 0, new int[] {0}, new int[] {NONE},
                new int[] {1}, new int[] {0}, new long[] {0}, new Event.ProbeSite[] {store}, new long[] {0x1000},
                false, new int[1], new int[0], new boolean[0], new boolean[0], true, false, new boolean[1], new long[0], 0, false,
                1, 0); // the update is the entry block's: the first iteration runs it
        List<Long> out = new ArrayList<>();
        LoopReplay r = new LoopReplay(loop).start();
        r.value(0, 1000); // the test steps it to 1008 before the first store
        assertThat(r.exit(1024, (a, s) -> out.add(a))).isTrue();
        assertThat(out).containsExactly(1008L, 1016L);
    }

    @Test
    void aStepByAnInvariantRegisterUsesItsEntryValue() {
        LoopReplay r = new LoopReplay(loop(0, 2));
        r.value(0, 0);
        r.value(1, 0);
        r.value(2, 100); // the index steps by 100 each iteration
        List<Out> out = new ArrayList<>();
        assertThat(r.logged(LOGGED_IP, (a, s) -> out.add(new Out(a, s.ip())))).isTrue();
        assertThat(r.logged(LOGGED_IP, (a, s) -> out.add(new Out(a, s.ip())))).isTrue();
        assertThat(out.get(1)).isEqualTo(new Out(16 + 4 * 100, 0x2000));
    }

    @Test
    void aRecordTheBodyDoesNotExpectOrATripCountThatDoesNotFitIsAMismatch() {
        LoopReplay r = new LoopReplay(loop(1, NONE));
        assertThat(r.logged(0x9999, (a, s) -> {})).isFalse();
        LoopReplay uneven = new LoopReplay(loop(1, NONE));
        uneven.value(0, 1000);
        assertThat(uneven.exit(1000 + 20, (a, s) -> {})).as("20 is no multiple of the step 16").isFalse();
        LoopReplay missing = new LoopReplay(loop(1, NONE));
        missing.value(0, 1000);
        assertThat(missing.exit(1000 + 32, (a, s) -> {})).as("two iterations but no logged record").isFalse();
    }

    /**
     * The same loop with its logged site a call's: between the call's record and the loop's next one come the
     * callee's records, which are not the loop's; outside a call, a foreign record is a mismatch.
     */
    @Test
    void afterACallsRecordTheCalleesRecordsAreNotTheLoops() {
        SkeletonTable.Placed plain = loop(1, NONE);
        SkeletonTable.Placed call = new SkeletonTable.Placed(plain.steps(), plain.stepSlots(), plain.tripSlot(), plain.baseSlot(),
                plain.indexSlot(), plain.scale(), plain.phase(), plain.displacement(), plain.sites(), plain.loggedIp(), true,
                plain.cond(), plain.markerPos(), plain.markerPhase(), plain.markerEnds(), false, false,
                new boolean[] {false, true, false}, new long[] {LOGGED_IP}, 0, false, 0, 0);
        LoopReplay r = new LoopReplay(call);
        r.value(0, 1000);
        List<Out> out = new ArrayList<>();
        LoopReplay.Sink sink = (a, s) -> out.add(new Out(a, s.ip()));
        assertThat(r.callees(0x9999)).as("before the call").isFalse();
        assertThat(r.logged(LOGGED_IP, sink)).isTrue();
        assertThat(r.inCall()).isTrue();
        assertThat(r.callees(0x9999)).as("the callee's record").isTrue();
        assertThat(r.callees(LOGGED_IP)).as("the loop's own record ends the call").isFalse();
        assertThat(r.logged(LOGGED_IP, sink)).isTrue();
        // the store after the first call (base 1000 + 16, index 0 + 1), then the load before the second one
        assertThat(out).containsExactly(new Out(1008, 0x1000), new Out(1016 + 4, 0x2000), new Out(1024, 0x1000));
        assertThat(r.exit(1032, sink)).isTrue();
        assertThat(r.inCall()).isFalse();
        assertThat(new LoopReplay(plain).start().callees(0x9999)).isFalse();
    }

    private static Event.ProbeSite load(long ip) {
        return new Event.ProbeSite(ip, Event.ProbeKind.LOAD, 8, 0, Event.ProbeSite.COMPUTED, 1, 1, 0, 0, 0,
                new Event.SelectionTotals(0, 0, 0));
    }

    /**
     * Position 0: load (base) every iteration; 1: load 100(base) and 2: a logged site, both in a conditional
     * block that marker 0 (at position 1, before the base's update) places. Slot 0 steps by 8.
     */
    private static SkeletonTable.Placed conditional() {
        return new SkeletonTable.Placed(new long[] {8}, new int[] {NONE}, 0, new int[] {0, 0, NONE}, new int[] {NONE, NONE, NONE},
                new int[] {1, 1, 0}, new int[] {0, 0, 0}, new long[] {0, 100, 0},
                new Event.ProbeSite[] {load(0x1000), load(0x1100), null}, new long[] {0x1000, 0x1100, LOGGED_IP}, true,
                new int[] {0, 1, 1}, new int[] {1}, new boolean[] {false}, new boolean[] {false}, false, false);
    }

    @Test
    void aMarkerPlacesItsBlockInTheIterationItsValueTells() {
        LoopReplay r = new LoopReplay(conditional()).start();
        r.value(0, 1000);
        List<Out> out = new ArrayList<>();
        LoopReplay.Sink sink = (a, s) -> out.add(new Out(a, s.ip()));
        // the block ran in iteration 2 only: iterations 0 and 1 give their every-iteration load alone
        assertThat(r.marker(0, 1000 + 2 * 8, sink)).isTrue();
        assertThat(out).containsExactly(new Out(1000, 0x1000), new Out(1008, 0x1000), new Out(1016, 0x1000));
        assertThat(r.logged(LOGGED_IP, sink)).isTrue();
        assertThat(out.getLast()).isEqualTo(new Out(1116, 0x1100));
        out.clear();
        assertThat(r.exit(1000 + 4 * 8, sink)).isTrue();
        assertThat(out).as("iteration 3 without the block").containsExactly(new Out(1024, 0x1000));
    }

    @Test
    void aMarkerForAnIterationAlreadyPassedOrALoggedRecordWithoutItsMarkerIsAMismatch() {
        LoopReplay r = new LoopReplay(conditional()).start();
        r.value(0, 1000);
        assertThat(r.marker(0, 1000 + 3 * 8, (a, s) -> {})).isTrue();
        assertThat(r.logged(LOGGED_IP, (a, s) -> {})).isTrue();
        assertThat(r.marker(0, 1000 + 3 * 8, (a, s) -> {})).as("iteration 3 again").isFalse();
        LoopReplay unmarked = new LoopReplay(conditional()).start();
        unmarked.value(0, 1000);
        assertThat(unmarked.logged(LOGGED_IP, (a, s) -> {})).as("the block's record before its marker").isFalse();
        LoopReplay open = new LoopReplay(conditional()).start();
        open.value(0, 1000);
        assertThat(open.marker(0, 1000, (a, s) -> {})).isTrue();
        assertThat(open.exit(1000 + 8, (a, s) -> {})).as("the block ran but its logged record is missing").isFalse();
    }

    @Test
    void anOptionalLoggedPositionIsMatchedByItsRecordOrSkipped() {
        // 0: logged every iteration (A); 1: logged in a conditional block (B); 2: load (base) every iteration
        long a = 0x5000, b = 0x6000;
        var loop = new SkeletonTable.Placed(new long[] {8}, new int[] {NONE}, 0, new int[] {NONE, NONE, 0},
                new int[] {NONE, NONE, NONE}, new int[] {0, 0, 1}, new int[] {0, 0, 0}, new long[] {0, 0, 0},
                new Event.ProbeSite[] {null, null, load(0x1000)}, new long[] {a, b, 0x1000}, true,
                new int[] {0, SkeletonTable.OPTIONAL, 0}, new int[0], new boolean[0], new boolean[0], false, false);
        LoopReplay r = new LoopReplay(loop).start();
        r.value(0, 1000);
        List<Long> out = new ArrayList<>();
        LoopReplay.Sink sink = (x, s) -> out.add(x);
        assertThat(r.logged(a, sink)).isTrue();
        assertThat(r.logged(a, sink)).as("iteration 0 without B").isTrue();
        assertThat(r.logged(b, sink)).as("iteration 1 with B").isTrue();
        assertThat(r.exit(1000 + 2 * 8, sink)).isTrue();
        assertThat(out).containsExactly(1000L, 1008L);
        LoopReplay wrong = new LoopReplay(loop).start();
        assertThat(wrong.logged(b, sink)).as("B before A").isFalse();
    }

    @Test
    void aRunReplayedAgainStartsFromItsOwnEntryValues() {
        LoopReplay r = new LoopReplay(loop(1, NONE)).start();
        r.value(0, 1000);
        r.logged(LOGGED_IP, (a, s) -> {});
        r.start().value(0, 5000);
        List<Long> out = new ArrayList<>();
        assertThat(r.logged(LOGGED_IP, (a, s) -> out.add(a))).isTrue();
        assertThat(out).containsExactly(5008L);
    }

    /** A loop entered at its test (record type 3) may stop there: no iteration, nothing computed; otherwise not. */
    @Test
    void onlyALoopEnteredAtItsTestMayRunNoIteration() {
        var totals = new Event.SelectionTotals(0, 0, 0);
        Event.ProbeSite load = new Event.ProbeSite(0x1000, Event.ProbeKind.LOAD, 8, 0, Event.ProbeSite.COMPUTED, 1, 1, 0, 0, 0, totals);
        for (boolean mayBeEmpty : new boolean[] {true, false}) {
            var loop = new SkeletonTable.Placed(new long[] {8}, new int[] {NONE}, 0, new int[] {0}, new int[] {NONE},
                    new int[] {1}, new int[] {0}, new long[] {0}, new Event.ProbeSite[] {load}, new long[] {0x1000}, false,
                    new int[1], new int[0], new boolean[0], new boolean[0], true, mayBeEmpty);
            List<Long> out = new ArrayList<>();
            LoopReplay r = new LoopReplay(loop).start();
            r.value(0, 4000);
            assertThat(r.exit(4000, (a, s) -> out.add(a))).as("may be empty: %s", mayBeEmpty).isEqualTo(mayBeEmpty);
            assertThat(out).isEmpty();
            r.start().value(0, 4000);
            assertThat(r.exit(4016, (a, s) -> out.add(a))).isTrue();
            assertThat(out).containsExactly(4000L, 4008L);
        }
    }

    /**
     * A break: positions 0 load (base) and 1 load 8(base), the side exit between them (marker 0 at position
     * 1, before the base's update by 16). Its record ends the run in the iteration it names, after position 0.
     */
    @Test
    void aSideExitEndsTheRunInTheMiddleOfTheIterationItNames() {
        var loop = new SkeletonTable.Placed(new long[] {16}, new int[] {NONE}, 0, new int[] {0, 0}, new int[] {NONE, NONE},
                new int[] {1, 1}, new int[] {0, 0}, new long[] {0, 8}, new Event.ProbeSite[] {load(0x1000), load(0x1008)},
                new long[] {0x1000, 0x1008}, false, new int[2], new int[] {1}, new boolean[] {false}, new boolean[] {true},
                true, false);
        List<Long> out = new ArrayList<>();
        LoopReplay r = new LoopReplay(loop).start();
        r.value(0, 3000);
        assertThat(r.ends(0)).isTrue();
        assertThat(r.marker(0, 3000 + 2 * 16, (a, s) -> out.add(a))).isTrue();
        assertThat(out).containsExactly(3000L, 3008L, 3016L, 3024L, 3032L);
    }

    /**
     * A break tested after the body's last position, a logged load (gcc -O2's {@code if (lit->val != -1) break;}
     * in skel_break.c): position 0 load (base), computed, position 1 the logged load, the side exit after it
     * (marker 0 at position 2, the body's end, before the base's update by 8). The logged record of iteration 1
     * has already moved the run to iteration 2's start, the place the marker of iteration 1 names: the run ends
     * there, with nothing more to emit.
     */
    @Test
    void aSideExitAfterALoggedLastPositionEndsTheRunWhereThatRecordLeftIt() {
        var loop = new SkeletonTable.Placed(new long[] {8}, new int[] {NONE}, 0, new int[] {0, NONE}, new int[] {NONE, NONE},
                new int[] {1, 1}, new int[] {0, 0}, new long[] {0, 0}, new Event.ProbeSite[] {load(0x1000), null},
                new long[] {0x1000, 0x1100}, true, new int[2], new int[] {2}, new boolean[] {false}, new boolean[] {true},
                false, false);
        List<Long> out = new ArrayList<>();
        LoopReplay r = new LoopReplay(loop).start();
        r.value(0, 3000);
        assertThat(r.logged(0x1100, (a, s) -> out.add(a))).isTrue();
        assertThat(r.logged(0x1100, (a, s) -> out.add(a))).isTrue();
        assertThat(r.marker(0, 3000 + 8, (a, s) -> out.add(a))).isTrue();
        assertThat(out).containsExactly(3000L, 3008L);
    }

    /**
     * A nest: outer body {@code 0: load (p); 1: the inner loop}, p stepped by 320 and counted by i; the inner loop
     * {@code load (q)}, q stepped by 8, entered with q = p + 8 and left at q = p + 8 + {@code trips} × 8. The
     * inner loop's accesses come at their place in each outer iteration, from p as it is there.
     */
    private static LoopReplay nest(long trips) {
        var totals = new Event.SelectionTotals(0, 0, 0);
        var innerLoad = new SkeletonTable.Item(0x2000, 1, 8, 0, 0, 1, 1, 0, 0, 0, 0, NONE, 1, 0, 0, 0, false);
        var inner = new SkeletonTable.Loop(0x1f00, new long[] {8}, new int[] {NONE}, 0, List.of(innerLoad), new long[0], new int[0],
                new boolean[0], new boolean[0], false, List.of("rax"), 0, false, 0, 0, List.of());
        var outerLoad = new SkeletonTable.Item(0x1000, 1, 8, 0, 0, 1, 1, 0, 0, 0, 0, NONE, 1, 0, 0, 0, false);
        var run = new SkeletonTable.Item(0x1f00, org.memtrace.format.SkeletonFormat.ITEM_NESTED, 0, 0, 0, 0, 0, 0, 0, 0, NONE, NONE, 0, 0, 0, 0, false);
        var nest = new SkeletonTable.Nest(1, inner, new SkeletonTable.Affine[] {new SkeletonTable.Affine(8, new int[] {0}, new long[] {1})},
                new SkeletonTable.Affine(8 + 8 * trips, new int[] {0}, new long[] {1}));
        var outer = new SkeletonTable.Loop(0x0f00, new long[] {320, 1}, new int[] {NONE, NONE}, 1, List.of(outerLoad, run), new long[0],
                new int[0], new boolean[0], new boolean[0], false, List.of("rdi", "rcx"), 0, false, 0, 0, List.of(nest));
        LoopReplay r = new LoopReplay(SkeletonTable.Placed.of(outer, 0, totals)).start();
        r.value(0, 1000);
        r.value(1, 0);
        return r;
    }

    @Test
    void aNestedLoopRunsWholeInEachOuterIterationFromTheOuterRegisters() {
        List<Out> out = new ArrayList<>();
        assertThat(nest(3).exit(2, (a, s) -> out.add(new Out(a, s.ip())))).isTrue();
        assertThat(out).containsExactly(new Out(1000, 0x1000), new Out(1008, 0x2000), new Out(1016, 0x2000), new Out(1024, 0x2000),
                new Out(1320, 0x1000), new Out(1328, 0x2000), new Out(1336, 0x2000), new Out(1344, 0x2000));
    }

    @Test
    void aNestedLoopWithoutATripCountStopsTheReplay() {
        List<Out> out = new ArrayList<>();
        LoopReplay r = nest(0);
        // an inner loop entered once runs at least once: a bound equal to its start is no trip count
        assertThat(r.exit(2, (a, s) -> out.add(new Out(a, s.ip())))).isFalse();
        assertThat(out).containsExactly(new Out(1000, 0x1000));
    }

    /**
     * {@code for (i = 0; i < n; i++) { p[i] = 0; if (i < 3) q[i] = 1; }} as gcc -O2 lays it out: slot 0 is i (step
     * 1), slot 1 p, slot 2 q; {@code cmp $2, i; jg past} before the block, which runs when the jump is not
     * taken. Five iterations: the store to q only in the first three, with no record but the exit's.
     */
    @Test
    void aComputedConditionRunsItsBlockInTheIterationsWhereItHolds() {
        var totals = new Event.SelectionTotals(0, 0, 0);
        Event.ProbeSite p = new Event.ProbeSite(0x1000, Event.ProbeKind.STORE, 8, 0, Event.ProbeSite.COMPUTED, 1, 1, 0, 0, 0, totals);
        Event.ProbeSite q = new Event.ProbeSite(0x2000, Event.ProbeKind.STORE, 8, 0, Event.ProbeSite.COMPUTED, 1, 1, 0, 0, 0, totals);
        var below3 = new SkeletonFormat.Condition(SkeletonFormat.Condition.CMP, 8, 15, false, 0, NONE, 0, 2, 0);
        var loop = new SkeletonTable.Placed(new long[] {1, 0, 0}, new int[] {NONE, NONE, NONE}, 0, new int[] {1, 2},
                new int[] {0, 0}, new int[] {8, 8}, new int[] {0, 0}, new long[] {0, 0}, new Event.ProbeSite[] {p, q},
                new long[] {0x1000, 0x2000}, false, new int[] {0, 1}, new int[] {1}, new boolean[1], new boolean[1], false, false,
                new boolean[2], new long[0], 0, false, 0, 0, new SkeletonTable.Nest[2], new SkeletonTable.Placed[2],
                new SkeletonFormat.Condition[] {below3});
        List<Out> out = new ArrayList<>();
        LoopReplay r = new LoopReplay(loop).start();
        r.value(0, 0);
        r.value(1, 0x10000);
        r.value(2, 0x20000);
        assertThat(r.exit(5, (a, s) -> out.add(new Out(a, s.ip())))).isTrue();
        assertThat(out).containsExactly(new Out(0x10000, 0x1000), new Out(0x20000, 0x2000), new Out(0x10008, 0x1000),
                new Out(0x20008, 0x2000), new Out(0x10010, 0x1000), new Out(0x20010, 0x2000), new Out(0x10018, 0x1000),
                new Out(0x10020, 0x1000));
    }
}
