package org.memtrace.select;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The properties §III states, checked on hand-written assembly blocks. */
class SelectionPropertiesTest {
    @TempDir
    Path dir;

    private BlockModel onlyBlockWithReferences(String source, AnalysisOptions options) throws Exception {
        List<BlockModel> blocks = Asm.blocks(dir, source, options).stream()
                .filter(b -> !b.references().isEmpty()).toList();
        assertThat(blocks).hasSize(1);
        return blocks.getFirst();
    }

    private BlockModel onlyBlockWithReferences(String source) throws Exception {
        return onlyBlockWithReferences(source, AnalysisOptions.DEFAULTS);
    }

    @Test
    void identicalExpressionsWithTheSameIncarnationsFormOneClass() throws Exception {
        BlockModel b = onlyBlockWithReferences("""
                mov eax, [rbx+rcx*4+8]
                mov edx, [rbx+rcx*4+8]
                add [rbx+rcx*4+8], esi
                mov r8, rax
                ret
                """);
        assertThat(b.references()).hasSize(3);
        assertThat(b.classes()).singleElement().satisfies(c -> {
            assertThat(c.size()).isEqualTo(3);
            assertThat(c.expression().template()).isEqualTo(Template.RRI);
            assertThat(c.expression().toString()).isEqualTo("RRI{rbx#0, rcx#0*4, 0x8}");
        });
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = ';', value = {
            "add rbx, 16",
            "mov ebx, esi",
            "mov bl, 1",
            "lea rbx, [rbx+8]",
            "pop rbx",
            "xchg rbx, rdx",
    })
    void anInterveningWriteToTheBaseRegisterSplitsTheClass(String write) throws Exception {
        BlockModel b = onlyBlockWithReferences("mov eax, [rbx+8]\n" + write + "\nmov ecx, [rbx+8]\nret\n");
        assertThat(b.classes()).hasSize(2);
        assertThat(b.classes().get(1).expression().base())
                .isEqualTo(new BidParameter.IncarnatedRegister(org.memtrace.x86.Register.named("rbx"), 1, 1));
    }

    @Test
    void aWriteToAnotherRegisterOrToMemoryKeepsTheClass() throws Exception {
        BlockModel b = onlyBlockWithReferences("mov eax, [rbx+8]\nadd rcx, 1\nmov [rdx], rcx\nmov esi, [rbx+8]\nret\n");
        assertThat(b.classes()).hasSize(2);
        assertThat(b.classes().getFirst().size()).isEqualTo(2);
    }

    @Test
    void expressionsLessThanAChunkApartAreAtDistanceZeroAndStepADiscardsOne() throws Exception {
        BlockModel b = onlyBlockWithReferences("""
                mov eax, [rbx+8]
                mov ecx, [rbx+16]
                mov edx, [rbx+8192]
                ret
                """);
        assertThat(b.classes()).hasSize(3);
        ExpressionDistance delta = AnalysisOptions.DEFAULTS.distance();
        BidExpression e8 = b.classes().get(0).expression(), e16 = b.classes().get(1).expression(),
                e8192 = b.classes().get(2).expression();
        assertThat(delta.distance(e8, e16)).isZero();
        assertThat(delta.distance(e8, e8192)).isEqualTo(ScoreTriplet.DEFAULT.s3());

        // ω = 0.5: W = 2 and Step A keeps one of [rbx+8], [rbx+16]: the far one and the first near one win.
        Selection s = b.select(0.5);
        assertThat(s.budget()).isEqualTo(2);
        assertThat(s.knapsack()).extracting(c -> c.candidate().equivalenceClass().expression())
                .containsExactly(e8192, e8);
        assertThat(s.knapsack().get(1).associated()).extracting(Candidate::equivalenceClass)
                .containsExactly(b.classes().get(1));
        assertThat(s.minimalAccuracy()).isEqualTo(2.0 / 3);
        assertThat(s.alignmentIndependentAccuracy()).isEqualTo(1.0);

        // With a chunk of 8 bytes nothing is near anything: Step A discards nothing.
        BlockModel fine = onlyBlockWithReferences("mov eax, [rbx+8]\nmov ecx, [rbx+16]\nmov edx, [rbx+8192]\nret\n",
                new AnalysisOptions(8, ScoreTriplet.DEFAULT, false));
        assertThat(fine.select(0.5).knapsack().stream().allMatch(c -> c.associated().isEmpty())).isTrue();
    }

    @Test
    void stepCRecoversDiscardedCandidatesWhenTheBudgetAllows() throws Exception {
        BlockModel b = onlyBlockWithReferences("mov eax, [rbx]\nmov ecx, [rbx+8]\nmov edx, [rbx+16]\nret\n");
        assertThat(b.select(0.34).knapsack()).hasSize(2); // ⌈1.02⌉: one per Step A round
        assertThat(b.select(0.34).alignmentIndependentAccuracy()).isEqualTo(1.0);
        assertThat(b.select(0.3).knapsack()).hasSize(1);
    }

    @Test
    void omegaOneSelectsEveryClassRepresentative() throws Exception {
        BlockModel b = onlyBlockWithReferences("""
                mov eax, [rbx]
                mov eax, [rbx]
                mov ecx, [rbx+8]
                mov edx, [rsi+rdi*8]
                mov [rip+0x100], edx
                mov eax, [0x601040]
                ret
                """);
        Selection s = b.select(1);
        assertThat(s.knapsack()).extracting(c -> c.candidate().representative())
                .containsExactlyInAnyOrderElementsOf(b.classes().stream().map(EquivalenceClass::representative).toList());
        assertThat(s.minimalAccuracy()).isEqualTo(1.0);
        assertThat(s.alignmentIndependentAccuracy()).isEqualTo(1.0);
    }

    @Test
    void ripRelativeAndAbsoluteAddressesBecomeIrrWithTheStaticAddress() throws Exception {
        BlockModel b = onlyBlockWithReferences("mov eax, [rip+0x100]\nmov ecx, [0x601040]\nmov edx, [rcx*4+0x601000]\nret\n");
        assertThat(b.classes()).extracting(c -> c.expression().template()).containsOnly(Template.IRR);
        long first = b.references().getFirst().instruction().nextAddress();
        assertThat(b.classes().get(0).expression().base()).isEqualTo(new BidParameter.Immediate(first + 0x100));
        assertThat(b.classes().get(1).expression().base()).isEqualTo(new BidParameter.Immediate(0x601040));
        assertThat(b.classes().get(2).expression().index()).isInstanceOf(BidParameter.IncarnatedRegister.class);
    }

    @Test
    void aBaseLoadedWithAStaticAddressMakesIrrUntilItIsOverwritten() throws Exception {
        BlockModel b = onlyBlockWithReferences("""
                lea rdx, [rip+0x1000]
                mov eax, [rdx+rcx*4]
                mov esi, [rdx+rcx*4+8]
                add rdx, 4
                mov edi, [rdx+rcx*4]
                ret
                """);
        long table = b.block().instructions().getFirst().nextAddress() + 0x1000;
        assertThat(b.references()).extracting(r -> r.expression().template())
                .containsExactly(Template.IRR, Template.IRR, Template.RRI);
        assertThat(b.references().get(0).expression().base()).isEqualTo(new BidParameter.Immediate(table));
        assertThat(b.references().get(1).expression().base()).isEqualTo(new BidParameter.Immediate(table + 8));
        assertThat(AnalysisOptions.DEFAULTS.distance().distance(b.references().get(0).expression(),
                b.references().get(1).expression())).isZero();
    }

    @Test
    void leaPrefetchAndNopsAreNotMemoryReferencesAndStackAccessesAreOptional() throws Exception {
        String source = "lea rax, [rbx+8]\nprefetcht0 [rbx]\nnop dword ptr [rax+rax]\npush rbx\nmov eax, [rsp+8]\nmov ecx, [rbp-4]\nmov edx, [rbx]\npop rbx\nret\n";
        BlockModel data = onlyBlockWithReferences(source);
        assertThat(data.references()).extracting(r -> r.instruction().mnemonic()).containsExactly("mov");
        List<BlockModel> withStack = Asm.blocks(dir, source, new AnalysisOptions(4096, ScoreTriplet.DEFAULT, true));
        assertThat(withStack.getFirst().references()).extracting(r -> r.instruction().mnemonic())
                .containsExactly("push", "mov", "mov", "mov", "pop", "ret");
    }

    @Test
    void callsAndSystemCallsEndBlocksAndJumpTargetsStartThem() throws Exception {
        List<BlockModel> blocks = Asm.blocks(dir, """
                mov eax, [rbx]
                call 1f
                mov eax, [rbx]
                syscall
                mov ecx, [rbx]
                1: test eax, eax
                jne 1b
                mov edx, [rbx]
                ret
                """, AnalysisOptions.DEFAULTS);
        assertThat(blocks).extracting(b -> b.references().size()).containsExactly(1, 1, 1, 0, 1);
    }

    @ParameterizedTest(name = "omega {0}, m {1} -> W {2}")
    @CsvSource({"0.7, 10, 7", "0.1, 3, 1", "0.25, 4, 1", "0.25, 5, 2", "0, 5, 0", "1, 5, 5", "0.5, 1, 1", "0.5, 0, 0"})
    void budgetIsTheCeilingOfOmegaTimesM(double omega, int m, int w) {
        assertThat(KnapsackSelection.budget(omega, m)).isEqualTo(w);
    }
}
