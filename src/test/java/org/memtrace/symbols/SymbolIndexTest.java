package org.memtrace.symbols;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Gcc;

/** Layouts from an assembly fixture: outer 0x1000+64 holding inner at +16, bare (no size), after, aliases, big holding small. */
class SymbolIndexTest {

    @TempDir
    static Path dir;
    static SymbolIndex index;
    static ElfFile elf;
    static long outer;
    static long big;

    @BeforeAll
    static void build() throws Exception {
        elf = ElfFile.read(Gcc.compile(dir, "symbols.S", "libsymbols.so", "-shared", "-nostdlib"));
        index = SymbolIndex.of(elf, null);
        outer = elf.symtab().stream().filter(s -> s.name().equals("outer")).findFirst().orElseThrow().value();
        big = elf.symtab().stream().filter(s -> s.name().equals("big")).findFirst().orElseThrow().value();
    }

    @Test
    void nestedSymbolWinsInsideItsExtentAndTheEnclosingOneResumes() {
        assertThat(index.function(outer + 3)).isEqualTo("outer+3");
        assertThat(index.function(outer + 16)).isEqualTo("inner+0");
        assertThat(index.function(outer + 23)).isEqualTo("inner+7");
        assertThat(index.function(outer + 24)).isEqualTo("outer+24");
        assertThat(index.function(outer + 63)).isEqualTo("outer+63");
        assertThat(index.object(big + 8)).isEqualTo("small+0");
        assertThat(index.object(big + 12)).isEqualTo("big+12");
        assertThat(index.object(big + 32)).isNull();
    }

    @Test
    void zeroSizeSymbolExtendsToTheNextSymbol() {
        assertThat(index.function(outer + 64)).isEqualTo("bare+0");
        assertThat(index.function(outer + 95)).isEqualTo("bare+31");
        assertThat(index.function(outer + 96)).isEqualTo("after+0");
    }

    @Test
    void aliasesResolveToTheVisibleNameWithFewestUnderscores() {
        assertThat(index.function(outer + 112)).isEqualTo("public_name+0");
        assertThat(index.function(outer + 119)).isEqualTo("public_name+7");
        assertThat(index.function(outer + 120)).isNull();
        assertThat(index.functions()).extracting(SymbolIndex.Symbol::name)
                .containsExactly("outer", "inner", "bare", "after", "public_name");
    }

    /** Each lookup remembers where it found its symbol: any order of lookups gets what a fresh index says. */
    @Test
    void lookupsInAnyOrderAgreeWithAFreshIndex() {
        java.util.List<Long> addresses = new java.util.ArrayList<>();
        for (long a = outer - 8; a < outer + 136; a += 3) addresses.add(a);
        for (long a = big - 8; a < big + 40; a += 2) addresses.add(a);
        java.util.Collections.shuffle(addresses, new java.util.Random(3));
        for (long a : addresses) {
            SymbolIndex fresh = SymbolIndex.of(elf, null);
            assertThat(index.function(a)).as("function at %x", a).isEqualTo(fresh.function(a));
            assertThat(index.object(a)).as("object at %x", a).isEqualTo(SymbolIndex.of(elf, null).object(a));
        }
    }
}
