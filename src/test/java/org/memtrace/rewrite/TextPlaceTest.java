package org.memtrace.rewrite;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.symbols.ElfFile;
import org.memtrace.testutil.Gcc;

/**
 * Where a module's trampolines are linked (ModuleRewrite.textBase, docs/rewriting.md "Placement within
 * ±2 GB"): a position-independent module's text {@link ModuleRewrite#spread} below it, at a distance its
 * build-id draws, so that the libraries a program loads next to each other keep their texts apart and at
 * their link-time places; a small position-dependent executable's right below it, as before.
 */
class TextPlaceTest {
    @TempDir Path dir;

    private static final byte[] LIBC = HexFormat.of().parseHex("93ac61ec5a8eb1396f9fbd350e3169a558528a40");
    private static final byte[] LDSO = HexFormat.of().parseHex("7ebc65e52f2bbea498b4040fa92f7238377aaba9");

    @Test
    void aSpreadIsDrawnFromTheBuildIdBetweenItsBoundsIn64KbSteps() {
        long libc = ModuleRewrite.spread(LIBC, 16L << 20), ldso = ModuleRewrite.spread(LDSO, 16L << 20);
        for (long d : new long[] {libc, ldso, ModuleRewrite.spread(new byte[0], 0)}) {
            assertThat(d).isBetween(ModuleRewrite.SPREAD_MIN, ModuleRewrite.SPREAD_MAX - 1);
            assertThat(d & 0xffff).isZero();
        }
        assertThat(ModuleRewrite.spread(LIBC.clone(), 16L << 20)).as("the same module, the same place").isEqualTo(libc);
        assertThat(Math.abs(libc - ldso)).as("two modules, texts apart").isGreaterThan(16L << 20);
    }

    @Test
    void aSpreadNeverTakesTheTextOutOfReach() {
        long span = ModuleRewrite.REACH - (100L << 20); // a module and its text of nearly 2 GB together
        long d = ModuleRewrite.spread(LIBC, span);
        assertThat(d + span).isLessThanOrEqualTo(ModuleRewrite.REACH - (16L << 20));
        assertThat(ModuleRewrite.spread(LIBC, ModuleRewrite.REACH)).as("no room: right below, as before").isZero();
    }

    @Test
    void aLibrarysTextLiesItsSpreadBelowItAndWithinReach() throws Exception {
        ElfFile libc = ElfFile.read(Path.of("/lib/x86_64-linux-gnu/libc.so.6"));
        long room = 12L << 20, end = libc.loadSegments().stream().mapToLong(s -> s.vaddr() + s.memSize()).max().orElseThrow();
        long base = ModuleRewrite.textBase(Path.of("libc.so.6"), libc, room);
        long spread = ModuleRewrite.spread(libc.buildId().orElseThrow(), end + room);
        assertThat(base).isEqualTo((-room - spread) & ~0xfffL);
        assertThat(base + room).as("the text's end, under the libraries next to it").isLessThanOrEqualTo(-ModuleRewrite.SPREAD_MIN);
        assertThat(end - base).as("every byte of module and text within a rel32").isLessThan(ModuleRewrite.REACH);
    }

    @Test
    void aSmallPositionDependentExecutablesTextIsRightBelowIt() throws Exception {
        Path prog = Gcc.compile(dir, "rewrite_tactics.s", "tactics", "-no-pie");
        ElfFile elf = ElfFile.read(prog);
        long lowest = elf.loadSegments().stream().mapToLong(s -> s.vaddr()).min().orElseThrow();
        assertThat(ModuleRewrite.textBase(prog, elf, 0x20000)).isEqualTo((lowest - 0x20000) & ~0xfffL);
    }
}
