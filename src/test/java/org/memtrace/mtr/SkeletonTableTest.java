package org.memtrace.mtr;

import org.memtrace.format.SkeletonFormat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.symbols.ElfFile;
import org.memtrace.testutil.Gcc;

/** The {@code memtrace_skel} section's computed conditions: the x86 flags they stand for, and the version they come in. */
class SkeletonTableTest {
    private static final int NONE = SkeletonTable.NONE;
    private static final int B = 2, AE = 3, E = 4, NE = 5, BE = 6, A = 7, S = 8, NS = 9, L = 12, GE = 13, LE = 14, G = 15;

    /** Whether the jump of {@code cc} after {@code cmp b, a} (AT&T: flags of a − b) at {@code width} bytes is taken. */
    private static boolean cmp(int width, int cc, long a, long b) {
        return new SkeletonFormat.Condition(SkeletonFormat.Condition.CMP, width, cc, true, 0, 1, 0, 0, 0).holds(a, b);
    }

    private static boolean test(int width, int cc, long a, long b) {
        return new SkeletonFormat.Condition(SkeletonFormat.Condition.TEST, width, cc, true, 0, 1, 0, 0, 0).holds(a, b);
    }

    @Test
    void aCompareIsSignedOrUnsignedAsItsJumpSays() {
        assertThat(cmp(8, L, -1, 0)).isTrue(); // -1 < 0 signed
        assertThat(cmp(8, B, -1, 0)).isFalse(); // 2^64 - 1 < 0 unsigned: no
        assertThat(cmp(8, A, -1, 0)).isTrue();
        assertThat(cmp(8, G, Long.MAX_VALUE, Long.MIN_VALUE)).isTrue(); // the subtraction overflows: OF decides
        assertThat(cmp(8, S, Long.MAX_VALUE, Long.MIN_VALUE)).isTrue(); // and the result's sign is set
        assertThat(cmp(8, LE, 5, 5)).isTrue();
        assertThat(cmp(8, GE, 4, 5)).isFalse();
        assertThat(cmp(8, BE, 5, 5)).isTrue();
        assertThat(cmp(8, AE, 4, 5)).isFalse();
        assertThat(cmp(8, NS, 4, 5)).isFalse();
    }

    @Test
    void aNarrowCompareReadsTheLowBytesOnly() {
        // cmpl: 0x1_00000005 and 5 have the same low halves
        assertThat(cmp(4, E, 0x1_0000_0005L, 5)).isTrue();
        assertThat(cmp(8, E, 0x1_0000_0005L, 5)).isFalse();
        // 0x7fffffff > 0xffffffff (-1) at 32 bits signed, not unsigned
        assertThat(cmp(4, G, 0x7fff_ffffL, 0xffff_ffffL)).isTrue();
        assertThat(cmp(4, A, 0x7fff_ffffL, 0xffff_ffffL)).isFalse();
        // cmpb: 0x80 is -128
        assertThat(cmp(1, L, 0x180, 0)).isTrue();
        assertThat(cmp(2, NE, 0x1_0000, 0)).isFalse();
    }

    @Test
    void aTestSetsZeroAndSignAndClearsCarryAndOverflow() {
        assertThat(test(1, E, 6, 1)).isTrue(); // testb $1, %al; je: even
        assertThat(test(1, NE, 7, 1)).isTrue();
        assertThat(test(8, S, -8, -8)).isTrue();
        assertThat(test(8, LE, 0, 0)).isTrue(); // ZF
        assertThat(test(8, L, -3, -3)).isTrue(); // SF != OF (0)
        assertThat(test(8, B, -3, -3)).isFalse(); // CF is 0
        assertThat(test(8, A, 2, 3)).isTrue(); // !CF && !ZF
    }

    @Test
    void anImmediateOperandAndTheEdgeIntoTheBlockAreHonoured() {
        // cmp $2, i; jg past: the block runs when the jump is not taken, i <= 2
        var c = new SkeletonFormat.Condition(SkeletonFormat.Condition.CMP, 8, G, false, 0, NONE, 0, 2, 0);
        assertThat(List.of(0L, 1L, 2L, 3L, 4L).stream().map(i -> c.holds(i, 12345)).toList()).containsExactly(true, true, true, false, false);
    }

    /** A section of a version this reader does not know is refused in one line that says so. */
    @Test
    void anUnknownSectionVersionIsRefused(@TempDir Path dir) throws Exception {
        Path s = dir.resolve("v3.s");
        Files.writeString(s, "\t.section memtrace_skel,\"aR\",@progbits\n\t.p2align 3\n\t.byte 6, 3, 0, 0\n\t.long 0\n");
        Path o = dir.resolve("v3.o");
        Gcc.run(List.of("gcc", "-c", "-o", o.toString(), s.toString()));
        assertThatThrownBy(() -> SkeletonTable.of(ElfFile.read(o))).isInstanceOf(MtrFormatException.class)
                .hasMessageContaining("memtrace_skel version 3").hasMessageNotContaining("\n");
    }

    /**
     * A linked section of two object files' parts, each a version record, an inner loop (type 0x81: one slot of
     * step 8 in the first part, 16 in the second; one computed load; its values, two constants) and an outer loop
     * whose kind-4 item names it by number 0: each outer loop runs its own part's inner loop (SkeletonParts), which
     * a reader counting across the section took for the first part's (issue 27). The PC-relative fields are 0 (an
     * object file is not relocated), so a loop's entry is its own field's address: part 1's records at 8 and 104,
     * part 2's (after its version record at 168) at 176 and 272.
     */
    @Test
    void aNestNamesItsInnerLoopWithinItsOwnPart(@TempDir Path dir) throws Exception {
        SkeletonTable table = SkeletonTable.of(ElfFile.read(twoParts(dir, 0)));
        SkeletonTable.Loop outer1 = table.loop(104 + 8), outer2 = table.loop(272 + 8);
        assertThat(outer1.nests()).singleElement().satisfies(n -> {
            assertThat(n.item()).isZero();
            assertThat(n.inner().entry()).isEqualTo(8 + 8);
            assertThat(n.inner().steps()).containsExactly(8);
        });
        assertThat(outer2.nests()).singleElement().satisfies(n -> {
            assertThat(n.inner().entry()).isEqualTo(176 + 8);
            assertThat(n.inner().steps()).containsExactly(16);
        });
        assertThat(table.loop(8 + 8)).isNull(); // an inner loop run whole: no record names it
        assertThat(table.loop(176 + 8)).isNull();
    }

    /** A nest whose number lies past its part's records read so far is refused, in one line. */
    @Test
    void aNestNamingNoLoopOfItsPartIsRefused(@TempDir Path dir) throws Exception {
        Path o = twoParts(dir, 1); // part 2 has one record before its outer loop: number 1 names none
        assertThatThrownBy(() -> SkeletonTable.of(ElfFile.read(o))).isInstanceOf(MtrFormatException.class)
                .hasMessageContaining("a memtrace_skel nest names no inner loop of its own").hasMessageNotContaining("\n");
    }

    /** The object file of {@link #aNestNamesItsInnerLoopWithinItsOwnPart}'s section, part 2's nest naming {@code second}. */
    private static Path twoParts(Path dir, int second) throws Exception {
        StringBuilder s = new StringBuilder("\t.section memtrace_skel,\"aR\",@progbits\n\t.p2align 3\n");
        for (int part = 0; part < 2; part++) {
            s.append("\t.byte 6, 2, 0, 0\n\t.long 0\n"); // the version record
            // the inner loop: type 1 | 0x80, one slot, trip slot 0, no marker, one item; entry and exit
            s.append("\t.byte 0x81, 1, 0, 0\n\t.long 1\n\t.long 0, 0\n");
            s.append("\t.quad ").append(8 << part).append("\n\t.byte 0xff\n\t.ascii \"rax\\0\\0\\0\\0\"\n");
            // a computed 8-byte load of (slot 0)
            s.append("\t.long 0\n\t.byte 1, 8, 0, 0\n\t.short 0, 0, 0, 0, 0\n\t.byte 0, 0xff, 0, 0, 0, 0\n\t.quad 0\n");
            s.append("\t.quad 4096\n\t.byte 0, 0, 0, 0, 0, 0, 0, 0\n\t.quad 4224\n\t.byte 0, 0, 0, 0, 0, 0, 0, 0\n"); // its values
            // the outer loop: one slot, one item, the inner loop's run: kind 4, its number in the displacement
            s.append("\t.byte 1, 1, 0, 0\n\t.long 1\n\t.long 0, 0\n");
            s.append("\t.quad 1\n\t.byte 0xff\n\t.ascii \"rcx\\0\\0\\0\\0\"\n");
            s.append("\t.long 0\n\t.byte 4, 0, 0, 0\n\t.short 0, 0, 0, 0, 0\n\t.byte 0xff, 0xff, 0, 0, 0, 0\n\t.quad ")
                    .append(part == 0 ? 0 : second).append('\n');
        }
        Path asm = dir.resolve("parts.s"), o = dir.resolve("parts.o");
        Files.writeString(asm, s.toString());
        Gcc.run(List.of("gcc", "-c", "-o", o.toString(), asm.toString()));
        return o;
    }
}
