package org.memtrace.instrument;

import static org.assertj.core.api.Assertions.assertThat;
import static org.memtrace.x86.Register.named;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the planner's pieces read from the assembly: inverse jumps, labels, numbers, block starts, writes. */
class AsmFactsTest {
    @TempDir
    Path dir;

    @Test
    void eachConditionalJumpHasItsInverseAndAnUnknownOneNone() {
        assertThat(AsmFacts.inverse("je")).isEqualTo("jne");
        assertThat(AsmFacts.inverse("jne")).isEqualTo("je");
        assertThat(AsmFacts.inverse("jg")).isEqualTo("jle");
        assertThat(AsmFacts.inverse("jb")).isEqualTo("jae");
        assertThat(AsmFacts.inverse("jpe")).isEqualTo("jpo");
        assertThat(AsmFacts.inverse("jrcxz")).isNull();
        assertThat(LoopSkeleton.inverse("ja")).as("the facade's").isEqualTo("jbe");
    }

    @Test
    void numbersAreWhatTheTextSpells() {
        assertThat(AsmFacts.number("16")).isEqualTo(16L);
        assertThat(AsmFacts.number("-8")).isEqualTo(-8L);
        assertThat(AsmFacts.number("0x1F")).isEqualTo(31L);
        assertThat(AsmFacts.number("-0x10")).isEqualTo(-16L);
        assertThat(AsmFacts.number("sym")).isNull();
        assertThat(AsmFacts.number("sym+8")).isNull();
    }

    @Test
    void labelsBlockStartsAndWritesOfALoop() throws Exception {
        HandAssembly h = HandAssembly.of(dir, HandLoops.IF_LOADED + "\tjmp\t*%rax\n");
        var code = h.code();
        assertThat(AsmFacts.label(code.get(h.at("jne")))).isEqualTo(".L3");
        assertThat(AsmFacts.label(code.get(h.at("jmp")))).as("an indirect jump").isNull();
        var body = code.subList(1, 8);
        // movl, testl, je | movl $0 | addq, cmpq, jne: blocks start after the je and at .L2
        assertThat(java.util.stream.IntStream.range(0, body.size()).filter(p -> AsmFacts.blockStart(body, p)).boxed().toList())
                .containsExactly(0, 3, 4);
        assertThat(AsmFacts.jumpTargets(code)).containsExactlyInAnyOrder(code.get(1).instruction().address(),
                code.get(h.at("addq")).instruction().address());
        assertThat(AsmFacts.writes(code.get(h.at("addq")).instruction(), named("rax"))).isTrue();
        assertThat(AsmFacts.writes(code.get(h.at("cmpq")).instruction(), AsmFacts.FLAGS)).isTrue();
        assertThat(AsmFacts.writes(code.get(h.at("cmpq")).instruction(), named("rax"))).isFalse();
        assertThat(AsmFacts.writes(code.get(0).instruction(), named("rax"))).as("xorl %eax writes its enclosing %rax").isTrue();
        assertThat(AsmFacts.spelled(code.get(h.at("movl $0")))).isTrue();
        assertThat(AsmFacts.positions(body)).containsEntry(code.get(1).instruction().address(), 0).hasSize(7);
    }
}
