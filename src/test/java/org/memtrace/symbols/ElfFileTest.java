package org.memtrace.symbols;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.memtrace.testutil.Gcc;

class ElfFileTest {

    static final Path LIBC = Path.of("/lib/x86_64-linux-gnu/libc.so.6");

    @TempDir
    static Path dir;
    static Path pie;
    static Path noPie;
    static Path pieStripped;
    static Path lib;
    static Path libStripped;

    @BeforeAll
    static void compile() throws Exception {
        pie = Gcc.compile(dir, "probe.c", "probe-pie", "-g", "-fPIE", "-pie");
        noPie = Gcc.compile(dir, "probe.c", "probe-nopie", "-g", "-fno-pie", "-no-pie");
        pieStripped = Gcc.strip(pie, "probe-pie-stripped");
        lib = Gcc.compile(dir, "lib.c", "libfixture.so", "-g", "-shared", "-fPIC");
        libStripped = Gcc.strip(lib, "libfixture-stripped.so");
    }

    static ElfSymbol symbol(java.util.List<ElfSymbol> table, String name) {
        return table.stream().filter(s -> s.name().equals(name)).findFirst().orElseThrow(() -> new AssertionError("no " + name));
    }

    @Test
    void readsTheSystemLibc() throws Exception {
        ElfFile libc = ElfFile.read(LIBC);
        assertThat(libc.type()).isEqualTo(ElfFile.ET_DYN);
        ElfSymbol malloc = symbol(libc.dynsym(), "malloc");
        assertThat(malloc.isFunction()).isTrue();
        assertThat(malloc.size()).isPositive();
        ElfSymbol stdout = symbol(libc.dynsym(), "stdout");
        assertThat(stdout.isObject()).isTrue();
        assertThat(stdout.size()).isEqualTo(8);
        assertThat(symbol(libc.dynsym(), "_IO_2_1_stdout_").isObject()).isTrue();
        assertThat(libc.buildId()).get().satisfies(id -> assertThat(id).hasSize(20));
        assertThat(libc.loadSegments()).anySatisfy(s -> assertThat(s.isExecutable()).isTrue());
        assertThat(libc.dynsym()).noneMatch(s -> s.name().contains("@"));
    }

    /** The .mtr reader's way in: the same file, its symbols parsed only when asked for, and then the same. */
    @ParameterizedTest
    @ValueSource(strings = {"libc", "pie", "lib"})
    void readSectionsParsesTheSameFileWithSymbolsOnDemand(String which) throws Exception {
        Path path = switch (which) {
            case "libc" -> LIBC;
            case "pie" -> pie;
            default -> lib;
        };
        ElfFile eager = ElfFile.read(path), lazy = ElfFile.readSections(path);
        assertThat(lazy.type()).isEqualTo(eager.type());
        assertThat(lazy.sections()).isEqualTo(eager.sections());
        assertThat(lazy.segments()).isEqualTo(eager.segments());
        assertThat(lazy.buildIdHex()).isEqualTo(eager.buildIdHex());
        assertThat(lazy.debugLink()).isEqualTo(eager.debugLink());
        assertThat(lazy.dynsym()).isNotEmpty().isEqualTo(eager.dynsym());
        assertThat(lazy.symtab()).isEqualTo(eager.symtab());
        assertThat(lazy.pltSlots()).isEqualTo(eager.pltSlots());
        assertThat(lazy.copyRelocations()).isEqualTo(eager.copyRelocations());
    }

    @Test
    void indexesLibcFunctionsAndObjects() throws Exception {
        ElfFile libc = ElfFile.read(LIBC);
        SymbolIndex index = SymbolIndex.of(libc, null);
        ElfSymbol malloc = symbol(libc.dynsym(), "malloc");
        assertThat(index.function(malloc.value())).isEqualTo("malloc+0");
        assertThat(index.function(malloc.value() + 17)).isEqualTo("malloc+17");
        ElfSymbol stdout = symbol(libc.dynsym(), "stdout");
        assertThat(index.object(stdout.value() + 4)).isEqualTo("stdout+4");
        assertThat(index.function(stdout.value())).isNull();
    }

    @Test
    void findsTheSeparateDebugFileOfLibcByBuildId() throws Exception {
        ElfFile libc = ElfFile.read(LIBC);
        String hex = libc.buildIdHex().orElseThrow();
        assumeThat(Path.of("/usr/lib/debug/.build-id", hex.substring(0, 2), hex.substring(2) + ".debug")).exists();
        ModuleImage image = ModuleImage.load(LIBC.toString(), DebugFiles.system());
        assertThat(image.debugFileUsed()).isTrue();
        ElfFile debug = DebugFiles.system().find(libc).orElseThrow();
        ElfSymbol intMalloc = symbol(debug.symtab(), "_int_malloc");
        assertThat(intMalloc.binding()).isEqualTo(ElfSymbol.STB_LOCAL);
        assertThat(image.symbols().function(intMalloc.value() + 5)).isEqualTo("_int_malloc+5");
    }

    @Test
    void unstrippedProgramsNameStaticFunctionsAndVariables() throws Exception {
        for (Path program : new Path[] {pie, noPie}) {
            ElfFile elf = ElfFile.read(program);
            assertThat(elf.type()).isEqualTo(program == pie ? ElfFile.ET_DYN : ElfFile.ET_EXEC);
            ElfSymbol helper = symbol(elf.symtab(), "helper");
            assertThat(helper.binding()).isEqualTo(ElfSymbol.STB_LOCAL);
            assertThat(helper.isFunction()).isTrue();
            SymbolIndex index = SymbolIndex.of(elf, null);
            assertThat(index.function(helper.value() + 3)).isEqualTo("helper+3");
            assertThat(index.object(symbol(elf.symtab(), "table").value() + 40)).isEqualTo("table+40");
            assertThat(index.object(symbol(elf.symtab(), "counter_s").value())).isEqualTo("counter_s+0");
            assertThat(index.object(symbol(elf.symtab(), "scratch_s").value() + 63)).isEqualTo("scratch_s+63");
            assertThat(index.object(symbol(elf.symtab(), "scratch_s").value() + 64))
                    .satisfiesAnyOf(n -> assertThat(n).isNull(), n -> assertThat(n).doesNotStartWith("scratch_s"));
        }
    }

    @Test
    void copyRelocationOfStdoutIsNamedPlainly() throws Exception {
        ElfFile elf = ElfFile.read(noPie);
        assertThat(elf.copyRelocations()).singleElement().satisfies(r -> {
            assertThat(r.name()).isEqualTo("stdout");
            assertThat(r.size()).isEqualTo(8);
        });
        long address = elf.copyRelocations().getFirst().address();
        assertThat(elf.symtab()).anySatisfy(s -> assertThat(s.name()).isEqualTo("stdout"));
        assertThat(SymbolIndex.of(elf, null).object(address)).isEqualTo("stdout+0");
        assertThat(SymbolIndex.of(ElfFile.read(Gcc.strip(noPie, "probe-nopie-stripped")), null).object(address + 2))
                .isEqualTo("stdout+2");
    }

    @Test
    void pltEntriesAreNamedLikeObjdump() throws Exception {
        String objdump = Gcc.run(java.util.List.of("objdump", "-d", "-j", ".plt", "-j", ".plt.sec", noPie.toString()));
        SymbolIndex index = SymbolIndex.of(ElfFile.read(noPie), null);
        var entries = java.util.regex.Pattern.compile("(?m)^([0-9a-f]+) <(\\S+@plt)>:").matcher(objdump);
        int seen = 0;
        while (entries.find()) {
            assertThat(index.function(Long.parseLong(entries.group(1), 16) + 4)).isEqualTo(entries.group(2) + "+4");
            seen++;
        }
        assertThat(seen).isGreaterThan(3);
    }

    @Test
    void pltGotEntriesAreNamedLikeObjdump() throws Exception {
        // a PIE calls __cxa_finalize through .plt.got; libc's own .plt.got holds its GLOB_DAT calls
        for (Path file : java.util.List.of(pie, Path.of(Gcc.run(java.util.List.of("gcc", "-print-file-name=libc.so.6")).strip()))) {
            String objdump = Gcc.run(java.util.List.of("objdump", "-d", "-j", ".plt.got", file.toString()));
            SymbolIndex index = SymbolIndex.of(ElfFile.read(file), null);
            var entries = java.util.regex.Pattern.compile("(?m)^([0-9a-f]+) <(\\S+@plt)>:").matcher(objdump);
            int seen = 0;
            while (entries.find()) {
                assertThat(index.function(Long.parseLong(entries.group(1), 16) + 2)).as(file + " " + entries.group(2))
                        .isEqualTo(entries.group(2) + "+2");
                seen++;
            }
            assertThat(seen).as(file.toString()).isGreaterThan(0);
        }
    }

    @Test
    void strippedProgramKeepsOnlyDynamicSymbols() throws Exception {
        ElfFile stripped = ElfFile.read(pieStripped);
        assertThat(stripped.symtab()).isEmpty();
        assertThat(stripped.dynsym()).isNotEmpty();
        long helper = symbol(ElfFile.read(pie).symtab(), "helper").value();
        assertThat(SymbolIndex.of(stripped, null).function(helper)).isNull();
        assertThat(stripped.buildIdHex()).isEqualTo(ElfFile.read(pie).buildIdHex());
    }

    @Test
    void strippedLibraryFallsBackToDynsym() throws Exception {
        ElfFile full = ElfFile.read(lib);
        ElfFile stripped = ElfFile.read(libStripped);
        assertThat(stripped.symtab()).isEmpty();
        SymbolIndex index = SymbolIndex.of(stripped, null);
        long function = symbol(full.symtab(), "lib_function").value();
        long global = symbol(full.symtab(), "lib_global").value();
        long hidden = symbol(full.symtab(), "lib_static_helper").value();
        assertThat(index.function(function + 4)).isEqualTo("lib_function+4");
        assertThat(index.object(global + 12)).isEqualTo("lib_global+12");
        assertThat(index.function(hidden)).isNull();
        assertThat(SymbolIndex.of(full, null).function(hidden + 1)).isEqualTo("lib_static_helper+1");
        assertThat(SymbolIndex.of(full, null).object(symbol(full.symtab(), "lib_hidden_counter").value()))
                .isEqualTo("lib_hidden_counter+0");
    }

    @Test
    void debugLinkOfAnObjcopySplitIsFound() throws Exception {
        Path debug = dir.resolve("libfixture.so.debug");
        Gcc.run(java.util.List.of("objcopy", "--only-keep-debug", lib.toString(), debug.toString()));
        Path linked = dir.resolve("libfixture-linked.so");
        Gcc.run(java.util.List.of("objcopy", "--strip-all", "--add-gnu-debuglink=" + debug, lib.toString(), linked.toString()));
        ElfFile elf = ElfFile.read(linked);
        assertThat(elf.debugLink()).contains("libfixture.so.debug");
        ModuleImage image = ModuleImage.load(linked.toString(), new DebugFiles(dir.resolve("no-such-root")));
        assertThat(image.debugFileUsed()).isTrue();
        long hidden = symbol(ElfFile.read(lib).symtab(), "lib_static_helper").value();
        assertThat(image.symbols().function(hidden + 2)).isEqualTo("lib_static_helper+2");
    }

    @Test
    void bytesAtAVirtualAddressAreTheFileContents() throws Exception {
        ElfFile elf = ElfFile.read(noPie);
        ElfSymbol f = symbol(elf.symtab(), "findDisparity");
        ElfSegment text = elf.loadSegments().stream().filter(s -> s.contains(f.value())).findFirst().orElseThrow();
        byte[] file = Files.readAllBytes(noPie);
        int offset = (int) (f.value() - text.vaddr() + text.offset());
        var bytes = elf.bytesAt(f.value(), 16);
        byte[] got = new byte[bytes.remaining()];
        bytes.get(got);
        assertThat(got).isEqualTo(Arrays.copyOfRange(file, offset, offset + 16));
        assertThat(elf.bytesAt(0x10, 16).remaining()).isZero();
    }

    @Test
    void sectionContentsAreTheFileBytesAndRelocatableObjectsParse() throws Exception {
        Path object = Gcc.compile(dir, "probe.c", "probe.o", "-c");
        ElfFile elf = ElfFile.read(object);
        assertThat(elf.type()).isEqualTo(ElfFile.ET_REL);
        assertThat(elf.loadSegments()).isEmpty();
        assertThat(symbol(elf.symtab(), "helper").isFunction()).isTrue();
        ElfSection text = elf.section(".text").orElseThrow();
        byte[] file = Files.readAllBytes(object);
        assertThat(elf.contents(text))
                .isEqualTo(Arrays.copyOfRange(file, (int) text.offset(), (int) (text.offset() + text.size())));
        assertThat(elf.contents(elf.section(".bss").orElseThrow())).isEmpty();
    }

    @Test
    void versionedDefinitionsKeepTheirVersionApartFromThePlainName() throws Exception {
        Path source = Files.writeString(dir.resolve("versioned.c"), """
                int foo_v1(int *p) { return p[1]; }
                int foo_v2(int *p) { return p[2] + 1; }
                __asm__(".symver foo_v1, foo@V1");
                __asm__(".symver foo_v2, foo@@V2");
                """);
        Path map = Files.writeString(dir.resolve("versioned.map"), "V1 { global: foo; local: *; };\nV2 { global: foo; } V1;\n");
        Path lib = dir.resolve("libversioned.so");
        Gcc.run(java.util.List.of("gcc", "-shared", "-fPIC", "-Wl,--version-script=" + map, "-o", lib.toString(), source.toString()));
        ElfFile elf = ElfFile.read(lib);
        var foo = elf.symtab().stream().filter(s -> s.name().equals("foo")).toList();
        assertThat(foo).extracting(ElfSymbol::version).containsExactlyInAnyOrder("@V1", "@@V2");
        assertThat(foo).extracting(ElfSymbol::storedName).containsExactlyInAnyOrder("foo@V1", "foo@@V2");
        assertThat(symbol(elf.symtab(), "foo_v1").version()).isEmpty();
        assertThat(elf.dynsym()).allSatisfy(s -> assertThat(s.version()).isEmpty());
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 3, 16, 63})
    void truncatedHeaderIsAFormatError(int length) throws Exception {
        byte[] image = Arrays.copyOf(Files.readAllBytes(pie), length);
        assertThatThrownBy(() -> ElfFile.parse("cut", image))
                .isInstanceOf(ElfFormatException.class)
                .hasMessageStartingWith("cut: ")
                .hasMessageNotContaining("\n");
    }

    @Test
    void wrongMagicClassOrEndiannessIsAFormatError() throws Exception {
        byte[] good = Files.readAllBytes(pie);
        for (int[] patch : new int[][] {{0, 0x7e}, {4, 1}, {5, 2}, {18, 3}}) {
            byte[] image = good.clone();
            image[patch[0]] = (byte) patch[1];
            assertThatThrownBy(() -> ElfFile.parse("bad", image)).isInstanceOf(ElfFormatException.class);
        }
    }

    /** Property: any truncation or random corruption parses or fails with the dedicated exception, nothing else. */
    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
    void corruptFilesNeverEscapeWithOtherExceptions(long seed) throws Exception {
        Random random = new Random(seed);
        byte[] good = Files.readAllBytes(random.nextBoolean() ? lib : pie);
        ElfFile parsed = ElfFile.parse("good", good);
        long shoff = parsed.sections().isEmpty() ? 64 : good.length - 64L * parsed.sections().size();
        for (int round = 0; round < 500; round++) {
            byte[] image = round % 3 == 0 ? Arrays.copyOf(good, random.nextInt(good.length)) : good.clone();
            int flips = 1 + random.nextInt(8);
            for (int i = 0; i < flips && image.length > 0; i++) {
                // Aim most corruption at the headers, where offsets and counts live.
                int at = switch (random.nextInt(3)) {
                    case 0 -> random.nextInt(Math.min(64 + 56 * 14, image.length));
                    case 1 -> (int) Math.min(image.length - 1, Math.max(0, shoff + random.nextInt(64 * 40)));
                    default -> random.nextInt(image.length);
                };
                image[at] = (byte) random.nextInt(256);
            }
            try {
                ElfFile elf = ElfFile.parse("fuzz", image);
                SymbolIndex.of(elf, null);
                elf.bytesAt(random.nextLong() & 0xffffff, 32);
                for (ElfSegment segment : elf.segments()) elf.bytesAt(segment.vaddr() + random.nextInt(1 << 16), 32);
            } catch (ElfFormatException e) {
                assertThat(e.getMessage()).startsWith("fuzz: ").doesNotContain("\n");
            }
        }
    }
}
