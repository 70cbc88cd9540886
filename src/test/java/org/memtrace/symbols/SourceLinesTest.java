package org.memtrace.symbols;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.ProbeRun;

/**
 * Source lines of programs gcc compiles here, checked against addr2line (binutils' own DWARF reader) at every
 * byte of every function of the fixtures: -O0 and -O2, DWARF 4 and 5, PIE and fixed-address, a shared
 * library, compressed sections, a separate debug file; and lines of real run-time addresses.
 */
class SourceLinesTest {

    /** The fixtures' functions (gcc may add suffixes such as {@code .part.0} or {@code .cold} at -O2). */
    static final Set<String> OWN = Set.of("main", "sum", "classify", "other", "square_plus", "lib_helper", "lib_lines");

    @TempDir
    static Path tmp;
    static Path dir;

    @BeforeAll
    static void sources() throws IOException {
        dir = tmp.toRealPath();
        Files.createDirectories(dir.resolve("src"));
        Files.createDirectories(dir.resolve("inc"));
        copy("lines_main.c", dir.resolve("src/lines_main.c"));
        copy("lines_other.c", dir.resolve("src/lines_other.c"));
        copy("lines_lib.c", dir.resolve("src/lines_lib.c"));
        copy("util.h", dir.resolve("inc/util.h"));
    }

    private static void copy(String fixture, Path target) throws IOException {
        try (InputStream in = SourceLinesTest.class.getResourceAsStream("/c/lines/" + fixture)) {
            if (in == null) throw new IOException("no fixture " + fixture);
            Files.copy(in, target);
        }
    }

    /** Compiles in {@link #dir}, so that the tables name {@code src/…} and {@code inc/…} as the command line did. */
    static Path build(String output, List<String> flags, String... sources) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("gcc", "-g", "-Iinc", "-o", output));
        command.addAll(flags);
        command.addAll(List.of(sources));
        ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true);
        Process p = builder.start();
        String out = new String(p.getInputStream().readAllBytes());
        if (p.waitFor() != 0) throw new IOException(String.join(" ", command) + " failed: " + out);
        return dir.resolve(output);
    }

    static Path program(String output, String... flags) throws IOException, InterruptedException {
        return build(output, List.of(flags), "src/lines_main.c", "src/lines_other.c");
    }

    @ParameterizedTest
    @CsvSource({"-O0,4,-no-pie", "-O0,5,-no-pie", "-O0,4,-pie", "-O0,5,-pie", "-O2,4,-no-pie", "-O2,5,-no-pie", "-O2,4,-pie", "-O2,5,-pie"})
    void everyAddressOfTheProgramsFunctionsHasTheLineOfTwoOtherReaders(String optimization, int dwarf, String pie) throws Exception {
        Path prog = program("prog" + optimization + dwarf + pie, optimization, "-gdwarf-" + dwarf, pie, pie.equals("-pie") ? "-fPIE" : "-fno-pie");
        ElfFile elf = ElfFile.read(prog);
        LineTable lines = DwarfLines.read(elf, elf.loadSegments());
        assertThat(lines.problem()).isEmpty();
        int compared = agreesWithReferences(prog, elf, lines, dwarf);
        assertThat(compared).isGreaterThan(optimization.equals("-O0") ? 300 : 150);
    }

    @Test
    void headerAndSourceFilesAreNamedAsCompiled() throws Exception {
        Path prog = program("named", "-O2", "-gdwarf-5");
        ElfFile elf = ElfFile.read(prog);
        LineTable lines = DwarfLines.read(elf, elf.loadSegments());
        Set<String> files = new java.util.TreeSet<>();
        for (long a : ownAddresses(elf)) lines.lineOf(a).ifPresent(l -> files.add(l.file()));
        // The inline function of the header shows up inside both files' functions.
        assertThat(files).contains("src/lines_main.c", "src/lines_other.c", "inc/util.h");
        // At -O2 the first instruction of sum carries the rows of its opening lines; the last one wins.
        SourceLine sum = lines.lineOf(function(elf, "sum").value()).orElseThrow();
        assertThat(sum.file()).isEqualTo("src/lines_main.c");
        assertThat(sum.line()).isBetween(lineOf("lines_main.c", "int sum(int n)"), lineOf("lines_main.c", "for (int i = 0; i < n; i++)"));
        SourceLine inlined = lines.lineOf(function(elf, "other").value() + function(elf, "other").size() / 2).orElseThrow();
        assertThat(inlined.file()).isIn("src/lines_other.c", "inc/util.h");
    }

    @Test
    void aDwarf4ObjectCompiledByARelativePathElsewhereIsFoundThroughItsCompilationDirectory() throws Exception {
        // The object is compiled in dir as `gcc -c src/lines_other.c`; the program is linked in another
        // directory. DWARF 4's line table names `src/lines_other.c` and leaves its directory 0 implicit: the
        // unit's DW_AT_comp_dir (dir) is where the file lies, as addr2line prints it.
        for (String dwarf : List.of("-gdwarf-4", "-gdwarf-5")) {
            build("other" + dwarf + ".o", List.of("-c", "-O0", dwarf), "src/lines_other.c");
            Path elsewhere = Files.createDirectories(tmp.resolve("link" + dwarf));
            Files.copy(dir.resolve("src/lines_main.c"), elsewhere.resolve("main.c"));
            Path prog = elsewhere.resolve("prog");
            Gcc.run(List.of("gcc", "-g", "-O0", dwarf, "-I" + dir.resolve("inc"), "-o", prog.toString(),
                    elsewhere.resolve("main.c").toString(), dir.resolve("other" + dwarf + ".o").toString()));
            ElfFile elf = ElfFile.read(prog);
            LineTable lines = DwarfLines.read(elf, elf.loadSegments());
            assertThat(lines.lineOf(function(elf, "other").value()).orElseThrow().file()).as(dwarf).isEqualTo("src/lines_other.c");
            assertThat(lines.location("src/lines_other.c")).as(dwarf).contains(dir.resolve("src/lines_other.c").toString());
            assertThat(lines.location("inc/util.h")).as(dwarf).contains(dir.resolve("inc/util.h").toString());
        }
    }

    @Test
    void sharedLibraryLinesCountFromItsLinkTimeAddresses() throws Exception {
        for (String dwarf : List.of("-gdwarf-4", "-gdwarf-5")) {
            Path lib = build("liblines" + dwarf + ".so", List.of("-O2", dwarf, "-shared", "-fPIC"), "src/lines_lib.c");
            ElfFile elf = ElfFile.read(lib);
            LineTable lines = DwarfLines.read(elf, elf.loadSegments());
            assertThat(agreesWithReferences(lib, elf, lines, dwarf.endsWith("4") ? 4 : 5)).isGreaterThan(40);
        }
    }

    @Test
    void compressedDebugSectionsAreInflated() throws Exception {
        Path prog = program("compressed", "-O2", "-gdwarf-5", "-gz=zlib");
        ElfFile elf = ElfFile.read(prog);
        assertThat(elf.section(".debug_line").orElseThrow().isCompressed()).isTrue();
        LineTable lines = DwarfLines.read(elf, elf.loadSegments());
        assertThat(lines.problem()).isEmpty();
        assertThat(agreesWithReferences(prog, elf, lines, 5)).isGreaterThan(150);
    }

    @Test
    void strippedProgramsTakeTheirLinesFromTheDebugFileFoundByBuildId() throws Exception {
        Path prog = program("separate", "-O2", "-gdwarf-5", "-Wl,--build-id");
        ElfFile full = ElfFile.read(prog);
        String id = full.buildIdHex().orElseThrow();
        Path root = dir.resolve("debug-root");
        Path debugFile = root.resolve(".build-id").resolve(id.substring(0, 2)).resolve(id.substring(2) + ".debug");
        Files.createDirectories(debugFile.getParent());
        Gcc.run(List.of("objcopy", "--only-keep-debug", prog.toString(), debugFile.toString()));
        Path noDebug = dir.resolve("separate-g");
        Gcc.run(List.of("strip", "-g", "-o", noDebug.toString(), prog.toString()));
        Path stripped = Gcc.strip(prog, "separate-stripped");
        LineTable reference = DwarfLines.read(full, full.loadSegments());
        List<Long> addresses = ownAddresses(full);
        for (Path variant : List.of(noDebug, stripped)) {
            ModuleImage image = ModuleImage.load(variant.toString(), new DebugFiles(root));
            assertThat(image.elf().orElseThrow().section(".debug_line")).isEmpty();
            LineTable lines = image.lines();
            assertThat(lines.problem()).isEmpty();
            for (long a : addresses) assertThat(lines.lineOf(a)).isEqualTo(reference.lineOf(a));
            ModuleImage withoutDebugFile = ModuleImage.load(variant.toString(), new DebugFiles(dir.resolve("nowhere")));
            assertThat(withoutDebugFile.lines().isEmpty()).isTrue();
            assertThat(withoutDebugFile.lines().problem().orElseThrow()).contains("no .debug_line");
        }
    }

    @Test
    void aProgramWithoutDashGHasNoLinesAndSaysSo() throws Exception {
        Path prog = dir.resolve("nodebug");
        Gcc.run(List.of("gcc", "-O1", "-I" + dir.resolve("inc"), "-o", prog.toString(),
                dir.resolve("src/lines_main.c").toString(), dir.resolve("src/lines_other.c").toString()));
        ModuleImage image = ModuleImage.load(prog.toString(), new DebugFiles(dir.resolve("nowhere")));
        assertThat(image.lines().isEmpty()).isTrue();
        assertThat(image.lines().problem().orElseThrow()).contains("no .debug_line").contains("without -g");
        assertThat(image.lines().lineOf(function(image.elf().orElseThrow(), "main").value())).isEmpty();
    }

    @Test
    void runTimeAddressesOfPieAndFixedAddressProgramsAndLibcHaveLines() throws Exception {
        for (String pie : List.of("-pie", "-no-pie")) {
            Path probe = Gcc.compile(dir, "probe.c", "probe" + pie, "-g", pie, pie.equals("-pie") ? "-fPIE" : "-fno-pie");
            ProbeRun run = ProbeRun.of(probe);
            AddressSpace space = new AddressSpace();
            run.events().forEach(space::observe);
            ElfFile elf = ElfFile.read(probe);
            long helper = run.address("helper");
            long helperVaddr = function(elf, "helper").value();
            for (long offset = 0; offset < function(elf, "helper").size(); offset++) {
                Reference expected = addr2line(probe, List.of(helperVaddr + offset)).getFirst();
                SourceLine got = space.sourceLine(helper + offset).orElseThrow();
                assertThat(dir.resolve(got.file()).toString()).isEqualTo(expected.path());
                assertThat(got.line()).isEqualTo(expected.line());
                assertThat(space.source(helper + offset)).isEqualTo(got.toString());
            }
            assertThat(space.sourceLine(helper).orElseThrow().line()).isEqualTo(lineOf(probe.resolveSibling("probe.c"), "int helper(int x)"));
            assertThat(space.source(8)).isNull();
            assertThat(space.sourceLine(8)).isEmpty();

            // A fixed-address program takes &puts as its PLT entry: only the PIE sees libc's own puts.
            if (!pie.equals("-pie")) continue;
            LoadedModule libc = space.moduleAt(run.address("puts"));
            Optional<ElfFile> debug = DebugFiles.system().find(libc.image().elf().orElseThrow());
            assumeThat(debug).as("libc6-dbg installed").isPresent();
            long puts = run.address("puts") - libc.bias();
            Reference expected = addr2line(debug.get().path(), List.of(puts)).getFirst();
            SourceLine got = space.sourceLine(run.address("puts")).orElseThrow();
            assertThat(got.line()).isEqualTo(expected.line());
            // binutils repeats the relative compilation directory (./libio/./libio/ioputs.c); memtrace gives the tree's path.
            assertThat(got.file()).isEqualTo("libio/ioputs.c");
            assertThat(DwarfLines.normalize(expected.path())).endsWith(got.file());
        }
    }

    @Test
    void libcLinesFromItsDebugFileAgreeWithTheOtherReaders() throws Exception {
        ElfFile libc = ElfFile.read(Path.of("/lib/x86_64-linux-gnu/libc.so.6"));
        Optional<ElfFile> debug = DebugFiles.system().find(libc);
        assumeThat(debug).as("libc6-dbg installed").isPresent();
        LineTable lines = DwarfLines.read(debug.get(), libc.loadSegments());
        assertThat(lines.problem()).isEmpty();
        java.util.Random random = new java.util.Random(5);
        List<ElfSymbol> functions = debug.get().symtab().stream().filter(s -> s.isFunction() && s.isDefined() && s.size() > 0).toList();
        List<Long> addresses = new ArrayList<>();
        for (int i = 0; i < 1500; i++) {
            ElfSymbol f = functions.get(random.nextInt(functions.size()));
            addresses.add(f.value() + random.nextLong(f.size()));
        }
        List<Reference> bfd = addr2line(debug.get().path(), addresses);
        List<Reference> llvm = llvmSymbolizer(debug.get().path(), addresses);
        int named = 0;
        for (int i = 0; i < addresses.size(); i++) {
            Optional<SourceLine> got = lines.lineOf(addresses.get(i));
            String where = "libc at 0x" + Long.toHexString(addresses.get(i));
            assertThat(got.map(SourceLine::line).orElse(0)).as(where).isEqualTo(bfd.get(i).line());
            if (llvm == null || got.isEmpty()) continue;
            // Both readers put the relative compilation directory twice (./libio/./libio/fileops.c); memtrace once.
            String reference = llvm.get(i).path().replaceFirst("^(\\./[^/]+)/\\1/", "$1/");
            assertThat(got.get().file()).as(where).isEqualTo(DwarfLines.normalize(reference));
            named++;
        }
        assertThat(named).isGreaterThan(llvm == null ? -1 : 1000);
    }

    /**
     * Compares the table at every byte of the fixtures' functions with two independent readers; returns how
     * many addresses were compared. addr2line (binutils 2.40) gives the reference line everywhere, but for
     * DWARF 5 it names the wrong file for the rows before a unit's first DW_LNS_set_file (it takes the
     * initial file register 1 for the primary source file, where DWARF 5 numbers that file 0 and gcc puts
     * the header there; gdb and objdump --dwarf=decodedline agree with memtrace), so its file names are
     * checked for DWARF 4 only. llvm-symbolizer, when installed, checks file and line everywhere.
     */
    static int agreesWithReferences(Path file, ElfFile elf, LineTable lines, int dwarf) throws Exception {
        List<Long> addresses = ownAddresses(elf);
        List<Reference> bfd = addr2line(file, addresses);
        List<Reference> llvm = llvmSymbolizer(file, addresses);
        for (int i = 0; i < addresses.size(); i++) {
            long a = addresses.get(i);
            Optional<SourceLine> got = lines.lineOf(a);
            String where = file.getFileName() + " at 0x" + Long.toHexString(a);
            Reference b = bfd.get(i);
            if (b.path().equals("??")) {
                assertThat(got).as(where).isEmpty();
                continue;
            }
            assertThat(got).as(where).isPresent();
            String path = got.get().file().startsWith("/") ? got.get().file() : dir.resolve(got.get().file()).toString();
            assertThat(got.get().line()).as(where + " (addr2line)").isEqualTo(b.line());
            if (dwarf == 4) assertThat(path).as(where + " (addr2line)").isEqualTo(b.path());
            if (llvm != null) assertThat(new Reference(path, got.get().line())).as(where + " (llvm-symbolizer)").isEqualTo(llvm.get(i));
        }
        return addresses.size();
    }

    static List<Long> ownAddresses(ElfFile elf) {
        List<Long> addresses = new ArrayList<>();
        for (ElfSymbol s : elf.symtab()) {
            int dot = s.name().indexOf('.');
            String base = dot > 0 ? s.name().substring(0, dot) : s.name();
            if (!s.isFunction() || !s.isDefined() || !OWN.contains(base)) continue;
            for (long a = s.value(); a < s.value() + s.size(); a++) addresses.add(a);
        }
        return addresses;
    }

    static ElfSymbol function(ElfFile elf, String name) {
        return elf.symtab().stream().filter(s -> s.isFunction() && s.name().equals(name)).findFirst().orElseThrow();
    }

    /** The 1-based line of the first line of a fixture containing {@code text}. */
    static int lineOf(String fixture, String text) throws IOException {
        return lineOf(dir.resolve("src").resolve(fixture), text);
    }

    static int lineOf(Path source, String text) throws IOException {
        List<String> all = Files.readAllLines(source);
        for (int i = 0; i < all.size(); i++) if (all.get(i).contains(text)) return i + 1;
        throw new IllegalArgumentException(source + " has no line with " + text);
    }

    /** One answer of a reference reader: path {@code ??} and line 0 when it knows no line. */
    record Reference(String path, int line) {}

    static List<Reference> addr2line(Path file, List<Long> addresses) throws Exception {
        List<String> command = new ArrayList<>(List.of("addr2line", "-e", file.toString()));
        for (long a : addresses) command.add("0x" + Long.toHexString(a));
        List<Reference> answers = new ArrayList<>();
        for (String line : Gcc.run(command).split("\n")) {
            int discriminator = line.indexOf(" (discriminator");
            String entry = discriminator >= 0 ? line.substring(0, discriminator) : line;
            int colon = entry.lastIndexOf(':');
            String number = entry.substring(colon + 1);
            answers.add(new Reference(entry.substring(0, colon), number.equals("?") ? 0 : Integer.parseInt(number)));
        }
        assertThat(answers).hasSize(addresses.size());
        return answers;
    }

    /** llvm-symbolizer's answers (without inlining frames: the line table's own row), or null when it is not installed. */
    static List<Reference> llvmSymbolizer(Path file, List<Long> addresses) throws Exception {
        Path tool = Path.of("/usr/bin/llvm-symbolizer");
        if (!Files.isExecutable(tool)) return null;
        List<String> command = new ArrayList<>(List.of(tool.toString(), "--obj=" + file, "--no-inlines", "--output-style=GNU"));
        for (long a : addresses) command.add("0x" + Long.toHexString(a));
        List<Reference> answers = new ArrayList<>();
        String[] out = Gcc.run(command).split("\n");
        // GNU style: the function's name, then file:line, per address.
        for (int i = 1; i < out.length; i += 2) {
            String entry = out[i].replaceFirst(" \\(discriminator \\d+\\)$", "");
            int colon = entry.lastIndexOf(':');
            answers.add(new Reference(entry.substring(0, colon), Integer.parseInt(entry.substring(colon + 1))));
        }
        assertThat(answers).hasSize(addresses.size());
        return answers;
    }
}
