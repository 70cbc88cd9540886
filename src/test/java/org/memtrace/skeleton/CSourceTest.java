package org.memtrace.skeleton;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.mtr.SkeletonTable;

/** The loop functions' text: affine addresses as C expressions, and shapes the generator does not know refused. */
class CSourceTest {
    private static final int NONE = SkeletonTable.NONE;

    private static SkeletonTable.Item item(int kind, int base, int index, int scale, int phase, int cond, long disp) {
        return new SkeletonTable.Item(0x1000, kind, 8, 0, 0, 1, 1, 0, 0, 0, base, index, scale, phase, cond, disp, false);
    }

    private static LoggedInput.Placement placed(List<SkeletonTable.Item> items, int markers) {
        var loop = new SkeletonTable.Loop(0x1000, new long[] {8, 1}, new int[] {NONE, NONE}, 1, items, new long[markers],
                new int[markers], new boolean[markers], new boolean[markers], false, List.of("rdi", "rax"));
        return new LoggedInput.Placement(loop, 0x400000, 3);
    }

    @Test
    void addressesAreTheBaseThePhasedIndexAndTheDisplacement() {
        String[] reg = {"rdi", "rax"};
        boolean[] moves = {true, true};
        assertThat(CSource.address(item(1, 0, 1, 8, 0, 0, 16), reg, moves)).isEqualTo("rdi + 8 * rax + 16");
        assertThat(CSource.address(item(1, 0, 1, 4, 3, 0, -8), reg, moves)).isEqualTo("rdi + step_rdi + 4 * (rax + step_rax) - 8");
        assertThat(CSource.address(item(1, 0, NONE, 1, 0, 0, 0), reg, moves)).isEqualTo("rdi");
        assertThat(CSource.address(item(1, NONE, 1, 1, 0, 0, 0x123456789L), reg, moves)).isEqualTo("rax + 0x123456789u");
        assertThat(CSource.address(item(1, 0, NONE, 1, 0, 0, Long.MIN_VALUE), reg, moves)).isEqualTo("rdi + 0x8000000000000000u");
    }

    @Test
    void aLoopIsAFunctionWhoseIterationsComputeItsAccessesAndReadItsLoggedOnes() throws Exception {
        String c = CSource.loop(placed(List.of(item(1, 0, 1, 8, 0, 0, 0), item(0, NONE, NONE, 1, 0, 0, 0), item(2, 0, NONE, 1, 1, 0, 8)), 0), "sum+0x10 in prog");
        assertThat(c).contains("/* Loop 3, sum+0x10 in prog: entered at 0x401000", "static void loop3(void)", "uint64_t rdi = next(&entry[0]);", "const uint64_t n = trips(ending, step_rax);",
                "        load(0x401000, rdi + 8 * rax, 8);\n        logged(0x401000);\n        store(0x401000, rdi + step_rdi + 8, 8);\n",
                "        rdi += step_rdi;\n        rax += step_rax;\n");
    }

    @Test
    void aMarkedBlockRunsWhenItsMarkerNamesTheIteration() throws Exception {
        var items = List.of(item(1, 0, NONE, 1, 0, 0, 0), item(1, 0, NONE, 1, 0, 1, 8));
        var loop = new SkeletonTable.Loop(0x1000, new long[] {8, 1}, new int[] {NONE, NONE}, 1, items, new long[1],
                new int[] {1}, new boolean[] {true}, new boolean[1], false, List.of("rdi", "rax"));
        String c = CSource.loop(new LoggedInput.Placement(loop, 0, 0), null);
        assertThat(c).contains("        const int block0 = marker(0, rax + step_rax);\n        if (block0) {\n            load(0x1000, rdi + 8, 8);\n        }\n");
    }

    @Test
    void aShapeItDoesNotKnowIsRefusedByName() {
        assertThatThrownBy(() -> CSource.loop(placed(List.of(item(4, 0, NONE, 1, 0, 0, 0)), 0), null))
                .isInstanceOf(CSource.UnknownShape.class).hasMessageContaining("kind 4: loop shape not emitted");
        assertThatThrownBy(() -> CSource.loop(placed(List.of(item(1, 0, NONE, 1, 0, 2, 0)), 1), null))
                .isInstanceOf(CSource.UnknownShape.class).hasMessageContaining("loop shape not emitted");
    }

    @Test
    void theFixedPartIsThreePartsOfTheResourceInOrder() {
        Map<String, String> parts = CSource.parts("skeleton.c");
        assertThat(parts).containsOnlyKeys("runtime", "reader", "main");
        assertThat(parts.get("runtime")).startsWith("\n#include <stdint.h>\n").endsWith("}\n");
        assertThat(parts.get("reader")).startsWith("\nstatic uint64_t get(void)\n");
        assertThat(parts.get("main")).startsWith("\nint main(int argc, char **argv)\n").contains("@INPUT@").endsWith("    return 0;\n}\n");
    }

    /** The resource with nothing generated between its parts (no site, no loop) is a program gcc takes at -Wall -Werror, which prints nothing for an empty input. */
    @Test
    void theFixedPartCompilesOnItsOwn(@TempDir Path dir) throws Exception {
        var about = new CSource.About("t.mtr", "skel.c", "skel.in", 0, 0, 0, 1);
        Files.writeString(dir.resolve("skel.c"), CSource.render(about, List.of(), List.of(), Map.of()));
        Files.write(dir.resolve("skel.in"), new byte[0]);
        var gcc = new ProcessBuilder("gcc", "-std=gnu11", "-O2", "-Wall", "-Werror", "-o", "skel", "skel.c")
                .directory(dir.toFile()).redirectErrorStream(true).start();
        String said = new String(gcc.getInputStream().readAllBytes());
        assertThat(gcc.waitFor()).as(said).isZero();
        var run = new ProcessBuilder(dir.resolve("skel").toString(), "skel.in").directory(dir.toFile()).start();
        assertThat(run.getInputStream().readAllBytes()).isEmpty();
        assertThat(run.waitFor()).isZero();
    }
}
