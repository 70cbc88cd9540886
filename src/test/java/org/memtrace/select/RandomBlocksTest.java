package org.memtrace.select;

import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** Seeded random blocks: the invariants of classes, knapsack and accuracy hold for every block and ω. */
class RandomBlocksTest {
    private static final String[] REGS = {"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9"};
    private static final double[] OMEGAS = {0, 0.1, 0.25, 0.5, 0.75, 1};

    @TempDir
    Path dir;

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3})
    void invariantsHold(long seed) throws Exception {
        Random random = new Random(seed);
        var source = new StringBuilder();
        for (int block = 0; block < 60; block++) {
            int length = 1 + random.nextInt(25);
            for (int k = 0; k < length; k++) {
                source.append(randomInstruction(random)).append('\n');
            }
            source.append("ret\n");
        }
        long chunk = List.of(8L, 64L, 4096L).get(random.nextInt(3));
        List<BlockModel> blocks = Asm.blocks(dir, source.toString(), new AnalysisOptions(chunk, ScoreTriplet.DEFAULT, false));
        assertThat(blocks).hasSizeGreaterThanOrEqualTo(60);
        for (BlockModel b : blocks) {
            checkClasses(b);
            for (double omega : OMEGAS) {
                checkSelection(b, b.select(omega), omega, new ExpressionDistance(ScoreTriplet.DEFAULT, chunk));
            }
        }
    }

    private static void checkClasses(BlockModel b) {
        Set<MemoryReference> seen = new HashSet<>();
        Set<BidExpression> expressions = new HashSet<>();
        for (EquivalenceClass c : b.classes()) {
            assertThat(expressions.add(c.expression())).as("one class per expression").isTrue();
            for (MemoryReference r : c.members()) {
                assertThat(r.expression()).isEqualTo(c.expression());
                assertThat(seen.add(r)).as("a reference in two classes").isTrue();
            }
        }
        assertThat(seen).containsExactlyInAnyOrderElementsOf(b.references());
        assertThat(b.candidates().size()).isEqualTo(b.classes().size());
    }

    private static void checkSelection(BlockModel b, Selection s, double omega, ExpressionDistance delta) {
        int m = b.classes().size();
        assertThat(s.budget()).isEqualTo((int) Math.ceil(omega * m - 1e-9));
        assertThat(s.knapsack()).hasSize(s.budget());
        assertThat(s.references()).isEqualTo(b.references().size());
        assertThat(s.minimalAccuracy()).isLessThanOrEqualTo(s.alignmentIndependentAccuracy());
        assertThat(s.alignmentIndependentAccuracy()).isLessThanOrEqualTo(1.0);
        Set<EquivalenceClass> counted = new HashSet<>();
        for (Selection.Choice c : s.knapsack()) {
            assertThat(counted.add(c.candidate().equivalenceClass())).isTrue();
            for (Candidate a : c.associated()) {
                assertThat(counted.add(a.equivalenceClass())).as("a class counted twice").isTrue();
                assertThat(delta.distance(a.equivalenceClass().expression(), c.candidate().equivalenceClass().expression()))
                        .as("associated only at distance zero").isZero();
            }
        }
        if (omega == 1) {
            assertThat(s.minimalAccuracy()).isEqualTo(1.0);
            assertThat(s.alignmentIndependentAccuracy()).isEqualTo(1.0);
        }
    }

    private static String randomInstruction(Random r) {
        String base = REGS[r.nextInt(REGS.length)];
        String index = REGS[r.nextInt(REGS.length)];
        String address = switch (r.nextInt(4)) {
            case 0 -> "[%s+%d]".formatted(base, r.nextInt(64) * 8);
            case 1 -> "[%s+%s*%d+%d]".formatted(base, index, 1 << r.nextInt(4), r.nextInt(10000));
            case 2 -> "[rip+%d]".formatted(r.nextInt(10000));
            default -> "[%s]".formatted(base);
        };
        String target = REGS[r.nextInt(REGS.length)];
        return switch (r.nextInt(6)) {
            case 0 -> "mov %s, qword ptr %s".formatted(target, address);
            case 1 -> "mov qword ptr %s, %s".formatted(address, target);
            case 2 -> "add qword ptr %s, %s".formatted(address, target);
            case 3 -> "add %s, 8".formatted(target);
            case 4 -> "lea %s, %s".formatted(target, address);
            default -> "cmp qword ptr %s, 0".formatted(address);
        };
    }
}
