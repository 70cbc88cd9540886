package org.memtrace.select;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.symbols.ElfFormatException;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

class ElfTextTest {
    @TempDir
    Path dir;

    private Path program(String... extraFlags) throws Exception {
        Path c = Files.writeString(dir.resolve("p.c"), """
                static int helper(int *p) { return p[3] + 1; }
                int data[8];
                int main(void) { return helper(data); }
                """);
        Path exe = dir.resolve("p" + extraFlags.length);
        var cmd = new java.util.ArrayList<>(List.of("gcc", "-O1", "-fno-inline", "-o", exe.toString(), c.toString()));
        cmd.addAll(List.of(extraFlags));
        Asm.run(dir, cmd.toArray(String[]::new));
        return exe;
    }

    private static void assertTiled(ElfText elf) {
        long cursor = elf.textAddress();
        for (FunctionSymbol f : elf.functions()) {
            assertThat(f.address()).isLessThanOrEqualTo(cursor);
            cursor = Math.max(cursor, f.end());
        }
        assertThat(cursor).isEqualTo(elf.textAddress() + elf.text().length);
    }

    @Test
    void functionsAndGapsCoverTheWholeTextSection() throws Exception {
        ElfText elf = ElfText.read(program());
        assertThat(elf.kind()).isEqualTo("shared library"); // a PIE is ET_DYN
        assertThat(elf.fixedAddress()).isFalse();
        assertThat(elf.functions()).extracting(FunctionSymbol::name).contains("main", "helper");
        assertTiled(elf);
    }

    @Test
    void aStrippedExecutableIsOnePseudoFunctionPerUncoveredStretch() throws Exception {
        ElfText elf = ElfText.read(program("-s", "-no-pie"));
        assertThat(elf.kind()).isEqualTo("executable");
        assertThat(elf.fixedAddress()).isTrue();
        assertThat(elf.imageStart()).isLessThan(elf.textAddress());
        assertThat(elf.functions()).allSatisfy(f -> assertThat(f.name()).startsWith(".text+0x"));
        assertTiled(elf);
    }

    /** Two versions of one function are two functions: each keeps the name .symtab gives it. */
    @Test
    void versionedDefinitionsAreNamedWithTheirVersion() throws Exception {
        Path c = Files.writeString(dir.resolve("v.c"), """
                int foo_v1(int *p) { return p[1]; }
                int foo_v2(int *p) { return p[2] + 1; }
                __asm__(".symver foo_v1, foo@V1");
                __asm__(".symver foo_v2, foo@@V2");
                """);
        Path map = Files.writeString(dir.resolve("v.map"), "V1 { global: foo; local: *; };\nV2 { global: foo; } V1;\n");
        Path lib = dir.resolve("libv.so");
        Asm.run(dir, "gcc", "-O1", "-shared", "-fPIC", "-Wl,--version-script=" + map, "-o", lib.toString(), c.toString());
        assertThat(ElfText.read(lib).functions()).extracting(FunctionSymbol::name).contains("foo@V1", "foo@@V2");
    }

    /** Damaged files either still parse or are refused with an ElfFormatException; nothing else escapes. */
    @Test
    void corruptedFilesFailCleanly() throws Exception {
        byte[] good = Files.readAllBytes(program());
        Random random = new Random(7);
        Path damaged = dir.resolve("damaged");
        int refused = 0;
        for (int round = 0; round < 300; round++) {
            byte[] bytes = good.clone();
            int flips = 1 + random.nextInt(8);
            for (int k = 0; k < flips; k++) {
                // Mostly hit the ELF header and the section headers at the end, where damage matters.
                int at = random.nextBoolean() ? random.nextInt(64) : bytes.length - 1 - random.nextInt(Math.min(bytes.length, 2048));
                bytes[at] = (byte) random.nextInt(256);
            }
            if (random.nextInt(10) == 0) {
                bytes = java.util.Arrays.copyOf(bytes, random.nextInt(bytes.length));
            }
            Files.write(damaged, bytes);
            try {
                ElfText elf = ElfText.read(damaged);
                new BinaryAnalyzer(AnalysisOptions.DEFAULTS).analyze(elf, elf.functions());
            } catch (ElfFormatException expected) {
                assertThat(expected.getMessage()).startsWith(damaged.toString() + ": ");
                refused++;
            } catch (Exception | Error e) {
                fail("round " + round + " escaped with " + e, e);
            }
        }
        assertThat(refused).isPositive();
    }
}
