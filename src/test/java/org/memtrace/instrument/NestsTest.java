package org.memtrace.instrument;

import static org.assertj.core.api.Assertions.assertThat;
import static org.memtrace.x86.Register.named;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.instrument.Induction.Update;
import org.memtrace.instrument.LoopSkeleton.Affine;
import org.memtrace.instrument.LoopSkeleton.Loop;
import org.memtrace.instrument.LoopSkeleton.Nest;

/** An outer loop that runs an inner loop whole, and the affine values one outer iteration computes. */
class NestsTest {
    @TempDir
    Path dir;

    @Test
    void theOuterLoopComputesTheInnerLoopsEntryValuesAndItsTrip() throws Exception {
        HandAssembly h = HandAssembly.of(dir, HandLoops.NEST);
        LoopSkeleton.Result r = h.plan();
        assertThat(r.declined()).isEmpty();
        assertThat(r.loops()).hasSize(2);
        Loop inner = r.loops().get(0), outer = r.loops().get(1);
        assertThat(inner.registers()).containsExactly(named("rdi"), named("rax"));
        assertThat(outer.registers()).containsExactly(named("rcx"), named("rdi"));
        assertThat(outer.steps()).containsExactly(1, 512);
        assertThat(outer.tripSlot()).isZero();
        assertThat(outer.items()).isEmpty();
        // the inner loop starts at the outer iteration's %rdi with %rax 0, and leaves %rax at 64
        assertThat(outer.nests()).containsExactly(new Nest(0, inner, List.of(Affine.register(named("rdi")), Affine.of(0)), Affine.of(64)));
        assertThat(LoopSkeleton.values(outer.nests().getFirst())).containsExactly(Affine.register(named("rdi")), Affine.of(0), Affine.of(64));
    }

    @Test
    void anInnerLoopWithAMarkerKeepsItsOwnRecords() throws Exception {
        // the inner loop's block under an if of loaded data has a marker probe: the outer loop cannot run it whole
        String asm = """
                \txorl\t%ecx, %ecx
                .L4:
                \txorl\t%eax, %eax
                .L3:
                \tmovl\t(%rdi,%rax,4), %edx
                \ttestl\t%edx, %edx
                \tje\t.L2
                \tmovl\t$0, (%rsi,%rax,4)
                .L2:
                \taddq\t$1, %rax
                \tcmpq\t$64, %rax
                \tjne\t.L3
                \taddq\t$256, %rdi
                \taddq\t$1, %rcx
                \tcmpq\t%r8, %rcx
                \tjne\t.L4
                \tret
                """;
        LoopSkeleton.Result r = HandAssembly.of(dir, asm).plan();
        assertThat(r.loops()).hasSize(1);
        assertThat(r.loops().getFirst().nests()).isEmpty();
        assertThat(r.declined()).extracting(LoopSkeleton.Declined::reason).containsExactly(LoopSkeleton.Reason.INNER_LOOP);
    }

    @Test
    void theInterpreterFollowsMovesLeaAdditionsAndShifts() throws Exception {
        HandAssembly h = HandAssembly.of(dir, """
                \tmovq\t%rdi, %rax
                \taddq\t$8, %rax
                \tleaq\t16(%rax,%rsi,4), %rcx
                \tshlq\t$2, %rcx
                \txorl\t%edx, %edx
                \tmovq\t(%rdi), %r9
                \tret
                """);
        // %rsi steps by 1 each outer iteration, %r9 is written by a load: unknown
        var state = new AffineInterpreter(Map.of(named("rsi"), List.of(9), named("rax"), List.of(0, 1), named("rcx"), List.of(2, 3), named("rdx"), List.of(4),
                named("r9"), List.of(5)), Map.of(named("rsi"), new Update(9, 1, null)));
        for (FunctionPlanner.Decoded d : h.code().subList(0, 6)) state.run(d);
        assertThat(state.value(named("rax"))).isEqualTo(Affine.register(named("rdi")).plus(Affine.of(8)));
        assertThat(state.value(named("rcx"))).isEqualTo(new Affine(96, Map.of(named("rdi"), 4L, named("rsi"), 16L)));
        assertThat(state.value(named("rdx"))).isEqualTo(Affine.of(0));
        assertThat(state.value(named("r9"))).isNull();
        assertThat(state.value(named("rsi"))).as("an induction register: its value at the iteration's start").isEqualTo(Affine.register(named("rsi")));
        assertThat(state.value(named("r10"))).as("never written: invariant").isEqualTo(Affine.register(named("r10")));
    }
}
