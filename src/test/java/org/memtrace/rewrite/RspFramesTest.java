package org.memtrace.rewrite;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.symbols.DwarfLocals;
import org.memtrace.symbols.ElfFile;
import org.memtrace.testutil.Gcc;

/**
 * The classification of optimised code's {@code %rsp}-based frame accesses ({@link RspFrames}, {@link CfaRows}):
 * a constant access from inside a variable past its end, or from below into one, is found and named; one held
 * by a variable, one merged over two adjacent variables, one in no variable (spills, outgoing arguments) is
 * not; an indexed access is checked only at a variable's start, scaled by its element, two elements or more.
 * ITC's no-defect half built -O2 -g gives no constant finding; its defect half three, each a defect line
 * (measured by hand: docs/check.md).
 */
class RspFramesTest {
    @TempDir Path dir;

    private static final DwarfLocals.Function F = new DwarfLocals.Function("f", 0x1000, 0x1100, List.of(
            new DwarfLocals.Local("a", -48, 20, 3), new DwarfLocals.Local("b", -28, 12, 4),
            new DwarfLocals.Local("x", -80, 4, 5), new DwarfLocals.Local("t", -76, 16, 6, "inner")), false, false);

    @Test
    void constantAccessesLeavingAVariableAreFound() {
        FrameConstants.Finding past = RspFrames.constant(F, -20, 16); // from inside b past its end
        assertThat(past.slot().variable()).isEqualTo("b");
        assertThat(past.offset()).isEqualTo(8);
        FrameConstants.Finding below = RspFrames.constant(F, -84, 8); // from below into x
        assertThat(below.slot().variable()).isEqualTo("x");
        assertThat(below.offset()).isEqualTo(-4);
        assertThat(RspFrames.constant(F, -62, 4)).as("past t, into nothing").isNotNull();
        assertThat(RspFrames.constant(F, -62, 4).slot().function()).as("an inlined call's variable").isEqualTo("inner");
    }

    @Test
    void accessesHeldByVariablesOrInNoneAreNot() {
        assertThat(RspFrames.constant(F, -48, 20)).isNull(); // a whole
        assertThat(RspFrames.constant(F, -32, 8)).isNull();  // a's end and b's start: a store gcc merged
        assertThat(RspFrames.constant(F, -100, 8)).isNull(); // no variable: a spill, an outgoing argument
        assertThat(RspFrames.constant(F, -60, 8)).isNull();  // between t and a, touching neither
    }

    @Test
    void indexedAccessesAreCheckedAtAVariablesStartOnly() {
        assertThat(RspFrames.element(F, -48, 4, 4).variable()).isEqualTo("a");
        assertThat(RspFrames.element(F, -48, 4, 4).size()).isEqualTo(20);
        assertThat(RspFrames.element(F, -44, 4, 4)).as("a folded constant: not a start").isNull();
        assertThat(RspFrames.element(F, -48, 4, 1)).as("an index not scaled by the element").isNull();
        assertThat(RspFrames.element(F, -80, 4, 4)).as("one element: a scalar, not an array").isNull();
        assertThat(RspFrames.element(F, -76, 8, 8).function()).isEqualTo("inner");
    }

    @Test
    void gccO2CodeIsClassifiedThroughItsCfi() throws Exception {
        Files.writeString(dir.resolve("f.c"), """
                #include <string.h>
                static const int six[6] = {1, 2, 3, 4, 5, 6};
                volatile int sink;
                __attribute__((noinline)) int sum(const int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i]; return s; }
                __attribute__((noinline)) int over(void) { int buf[5]; memcpy(buf, six, 24); return sum(buf, 5); }
                __attribute__((noinline)) int fits(void) { int buf[6]; memcpy(buf, six, 24); return sum(buf, 6); }
                __attribute__((noinline)) int hist(const unsigned char *v, int n) {
                    int c[8] = {0}; for (int i = 0; i < n; i++) c[v[i]]++; return sum(c, 8); }
                int main(void) { unsigned char v[2] = {1, 2}; return over() + fits() + hist(v, 2); }
                """);
        ElfFile elf = ElfFile.read(Gcc.compile(dir, "f.c", "f", "-O2", "-g", "-w"));
        RspFrames.Found found = RspFrames.of(elf, DwarfLocals.readOptimised(elf));
        Map<String, FrameConstants.Finding> constants = new TreeMap<>();
        found.constants().values().forEach(c -> constants.put(c.slot().function(), c));
        assertThat(constants).containsOnlyKeys("over");
        assertThat(constants.get("over").offset()).isEqualTo(16);
        assertThat(found.indexed().values()).extracting(i -> i.slot().variable()).containsExactly("c");
        assertThat(found.indexed().values().iterator().next().rspToCfa()).isGreaterThan(8);
        // the same pass finds the functions whose calls all see one CFA (run --check's table): every caller,
        // each at least past its return address; sum calls nothing
        Map<Long, String> byLow = new TreeMap<>();
        for (DwarfLocals.Function f : DwarfLocals.readOptimised(elf)) byLow.put(f.low(), f.name());
        Map<String, Long> calls = new TreeMap<>();
        found.calls().forEach((low, k) -> calls.put(byLow.get(low), k));
        assertThat(calls).containsKeys("over", "fits", "hist").doesNotContainKey("sum");
        assertThat(calls.values()).allSatisfy(k -> assertThat(k).isGreaterThanOrEqualTo(8));
    }
}
