package org.memtrace.select;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.x86.Decoder;
import org.memtrace.x86.Instruction;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** Totals over whole binaries are consistent: every memory reference in exactly one class, budgets kept. */
class WholeBinaryTest {
    static final Path LIBC = Path.of("/lib/x86_64-linux-gnu/libc.so.6");

    private static final String PROGRAM = """
            #include <stdio.h>
            #include <stdlib.h>
            int table[1024];
            struct point { double x, y, z; };
            static double norm(const struct point *p) { return p->x * p->x + p->y * p->y + p->z * p->z; }
            int main(int argc, char **argv) {
                struct point *pts = malloc(sizeof *pts * 100);
                for (int i = 0; i < 100; i++) { pts[i].x = i; pts[i].y = 2 * i; pts[i].z = table[i % 1024]; }
                double s = 0;
                for (int i = 0; i < 100; i++) { s += norm(&pts[i]); table[i] += (int) s; }
                printf("%f %d\\n", s, table[argc]);
                free(pts);
                return 0;
            }
            """;

    @Test
    void compiledProgram(@TempDir Path dir) throws Exception {
        Path c = dir.resolve("prog.c");
        Files.writeString(c, PROGRAM);
        Path exe = dir.resolve("prog");
        Asm.run(dir, "gcc", "-O2", "-no-pie", "-o", exe.toString(), c.toString());
        ElfText elf = ElfText.read(exe);
        assertThat(elf.kind()).isEqualTo("executable");
        assertThat(elf.fixedAddress()).isTrue();
        assertThat(elf.functions()).extracting(FunctionSymbol::name).contains("main");
        List<FunctionModel> models = new BinaryAnalyzer(AnalysisOptions.DEFAULTS).analyze(elf, elf.functions());
        checkTotals(elf, models);
        // main reads and writes table[]: a static array, so IRR with its link-time address.
        FunctionModel main = models.stream().filter(f -> f.function().name().equals("main")).findFirst().orElseThrow();
        assertThat(main.blocks()).flatMap(BlockModel::references)
                .anySatisfy(r -> assertThat(r.expression().template()).isEqualTo(Template.IRR));
    }

    @Test
    void systemLibcIsAnalyzedConsistently() throws Exception {
        ElfText elf = ElfText.read(LIBC);
        List<FunctionModel> models = new BinaryAnalyzer(AnalysisOptions.DEFAULTS).analyze(elf, elf.functions());
        AnalysisSummary s = AnalysisSummary.of(models, 0.25);
        assertThat(s.memoryReferences()).isGreaterThan(10_000);
        checkTotals(elf, models);
    }

    @Test
    void everyByteOfLibcTextDecodes() throws Exception {
        ElfText elf = ElfText.read(LIBC);
        List<Instruction> all = new Decoder().decodeAll(elf.text(), 0, elf.text().length, elf.textAddress());
        long covered = all.stream().mapToLong(Instruction::length).sum();
        assertThat(all).hasSizeGreaterThan(200_000);
        // Linear sweep over glibc's .text: only a handful of bytes (data in code) may fail to decode.
        assertThat(elf.text().length - covered).isLessThan(64);
        for (int k = 1; k < all.size(); k++) {
            assertThat(all.get(k).address()).isGreaterThanOrEqualTo(all.get(k - 1).nextAddress());
        }
    }

    private static void checkTotals(ElfText elf, List<FunctionModel> models) {
        int references = 0, inClasses = 0, classes = 0;
        for (FunctionModel f : models) {
            assertThat(f.function().address()).isGreaterThanOrEqualTo(elf.textAddress());
            for (BlockModel b : f.blocks()) {
                Set<MemoryReference> seen = new HashSet<>();
                for (EquivalenceClass c : b.classes()) {
                    for (MemoryReference r : c.members()) {
                        assertThat(seen.add(r)).isTrue();
                    }
                    inClasses += c.size();
                }
                assertThat(seen).containsExactlyInAnyOrderElementsOf(b.references());
                references += b.references().size();
                classes += b.classes().size();
                for (double omega : new double[]{0.1, 0.5, 1}) {
                    Selection s = b.select(omega);
                    assertThat(s.knapsack()).hasSizeLessThanOrEqualTo(s.budget());
                    assertThat(s.budget()).isLessThanOrEqualTo(b.classes().size());
                    assertThat(s.minimalAccuracy()).isLessThanOrEqualTo(s.alignmentIndependentAccuracy());
                    assertThat(s.alignmentIndependentAccuracy()).isLessThanOrEqualTo(1.0);
                }
            }
        }
        assertThat(inClasses).isEqualTo(references);
        AnalysisSummary all = AnalysisSummary.of(models, 1);
        assertThat(all.memoryReferences()).isEqualTo(references);
        assertThat(all.classes()).isEqualTo(classes);
        assertThat(all.selected()).isEqualTo(classes);
        assertThat(all.minimalAccuracy()).isEqualTo(1.0);
    }
}
