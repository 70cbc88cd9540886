package org.memtrace.instrument;

import static org.assertj.core.api.Assertions.assertThat;
import static org.memtrace.x86.Register.named;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.instrument.Induction.Update;
import org.memtrace.x86.MemoryOperand;
import org.memtrace.x86.Register;

/** Updates that step a register once per iteration, and the accesses whose address the replay can compute. */
class InductionTest {
    @TempDir
    Path dir;

    private static final String UPDATES = """
            \taddq\t$8, %rdi
            \tleaq\t16(%rdi), %rdi
            \tsubq\t$4, %rsi
            \tincq\t%rax
            \tdecq\t%rcx
            \taddq\t%rdx, %r8
            \taddl\t$1, %r9d
            \taddq\t$sym, %r10
            \tmovq\t%r11, %r11
            \tmovl\t16(%rdi,%rax,4), %edx
            \tmovl\t%fs:16(%rdi,%rax,4), %edx
            \tmovl\tsym(%rdi,%rax,4), %edx
            \tret
            """;

    @Test
    void aConstantAddedIsAStepAndAnInvariantRegisterAddedIsAStepByIt() throws Exception {
        HandAssembly h = HandAssembly.of(dir, UPDATES);
        var code = h.code();
        assertThat(Induction.step(code.get(0), named("rdi"))).isEqualTo(8L);
        assertThat(Induction.step(code.get(1), named("rdi"))).as("lea of itself").isEqualTo(16L);
        assertThat(Induction.step(code.get(2), named("rsi"))).isEqualTo(-4L);
        assertThat(Induction.step(code.get(3), named("rax"))).isEqualTo(1L);
        assertThat(Induction.step(code.get(4), named("rcx"))).isEqualTo(-1L);
        assertThat(Induction.step(code.get(6), named("r9"))).as("a 32-bit update zero-extends: no step").isNull();
        assertThat(Induction.step(code.get(7), named("r10"))).as("a relocated immediate is no number").isNull();
        assertThat(Induction.step(code.get(8), named("r11"))).isNull();
        assertThat(Induction.step(code.get(0), named("rsi"))).as("another register's update").isNull();
        assertThat(Induction.update(code.get(5), named("r8"), 5, Map.of(named("r8"), List.of(5)))).isEqualTo(new Update(5, 0, named("rdx")));
        assertThat(Induction.update(code.get(5), named("r8"), 5, Map.of(named("r8"), List.of(5), named("rdx"), List.of(2))))
                .as("%rdx written in the body: not invariant").isNull();
        assertThat(Induction.update(code.get(0), named("rdi"), 0, Map.of())).isEqualTo(new Update(0, 8, null));
    }

    @Test
    void anAccessIsAffineInInvariantAndInductionRegistersWithADisplacementTheTextSpells() throws Exception {
        HandAssembly h = HandAssembly.of(dir, UPDATES);
        var code = h.code();
        Map<Register, List<Integer>> writers = Map.of(named("rax"), List.of(3));
        Map<Register, Update> induction = Map.of(named("rax"), new Update(3, 1, null));
        MemoryOperand m = Induction.affine(code.get(9), h.probes().get(9), writers, induction);
        assertThat(m).isNotNull();
        assertThat(m.displacement()).isEqualTo(16);
        assertThat(m.base().name()).isEqualTo("rdi");
        assertThat(m.index().name()).isEqualTo("rax");
        assertThat(m.scale()).isEqualTo(4);
        assertThat(Induction.affine(code.get(9), h.probes().get(9), Map.of(named("rax"), List.of(3)), Map.of()))
                .as("%rax written but not stepped").isNull();
        assertThat(Induction.affine(code.get(10), h.probes().get(10), writers, induction)).as("%fs-relative").isNull();
        assertThat(Induction.affine(code.get(11), h.probes().get(11), writers, induction)).as("a relocated displacement").isNull();
    }

    @Test
    void aSlotIsARegistersPlaceInTheLoggedList() {
        var slots = new java.util.ArrayList<>(List.of(named("rdi")));
        assertThat(Induction.slot(slots, named("rax"))).isEqualTo(1);
        assertThat(Induction.slot(slots, named("rdi"))).isZero();
        assertThat(slots).containsExactly(named("rdi"), named("rax"));
    }
}
