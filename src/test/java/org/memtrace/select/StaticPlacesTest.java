package org.memtrace.select;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A static operand is the same place, symbol + offset, in a relocatable object (read from its relocations)
 * and in the program linked from it (read back through the symbol table), so distances between static
 * operands are the same before and after the link.
 */
class StaticPlacesTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"-fpie", "-fno-pie"})
    void theObjectAndTheLinkedProgramSeeTheSamePlaces(String pic) throws Exception {
        Path c = Files.writeString(dir.resolve("p.c"), """
                static int table[2048];
                int g;
                static const char *words[] = {"one", "two"};
                __attribute__((noinline)) int f(int i) {
                    return table[0] + table[10] + table[1500] + g + table[i] + words[i & 1][0];
                }
                int main(void) { table[5] = 3; return f(5) & 1; }
                """);
        Path object = dir.resolve("p.o");
        Path program = dir.resolve("p");
        Asm.run(dir, "gcc", "-O2", pic, "-c", "-o", object.toString(), c.toString());
        Asm.run(dir, "gcc", pic.equals("-fpie") ? "-pie" : "-no-pie", "-o", program.toString(), object.toString());

        List<BidExpression> before = expressions(object);
        List<BidExpression> after = expressions(program);
        assertThat(before).hasSameSizeAs(after);
        List<String> bases = before.stream().map(e -> e.base().toString()).toList();
        assertThat(after.stream().map(e -> e.base().toString()).toList()).isEqualTo(bases);
        assertThat(bases).contains("table", "table+0x28", "table+0x1770", "g", "words");

        ExpressionDistance distance = AnalysisOptions.DEFAULTS.distance();
        for (List<BidExpression> view : List.of(before, after)) {
            BidExpression first = byBase(view, "table"), near = byBase(view, "table+0x28"), far = byBase(view, "table+0x1770");
            assertThat(distance.distance(first, near)).isZero();
            assertThat(distance.distance(first, far)).isPositive();
            assertThat(distance.distance(first, byBase(view, "g"))).isPositive();
        }
    }

    private static BidExpression byBase(List<BidExpression> view, String base) {
        return view.stream().filter(e -> e.base().toString().equals(base)).findFirst().orElseThrow();
    }

    /** The expressions of f's memory references, in order. */
    private static List<BidExpression> expressions(Path file) throws Exception {
        ElfText elf = ElfText.read(file);
        FunctionSymbol f = elf.functions().stream().filter(x -> x.name().equals("f")).findFirst().orElseThrow();
        var result = new ArrayList<BidExpression>();
        for (FunctionModel m : new BinaryAnalyzer(AnalysisOptions.DEFAULTS).analyze(elf, List.of(f))) {
            for (BlockModel b : m.blocks()) {
                b.references().forEach(r -> result.add(r.expression()));
            }
        }
        return result;
    }
}
