package org.memtrace.symbols;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Gcc;

/**
 * The demangler against c++filt given each name as an argument, on every defined dynamic symbol of
 * libstdc++ (about 5,000 C++ names: nested names, templates, std:: substitutions, operators, constructors
 * and destructors, cv-qualified and reference parameters, clone suffixes): the one batch on stdin must give
 * every name its own answer, line for line. Every name the demangler returns equals the oracle's; the
 * coverage (names demangled over names the oracle demangles) is printed and must be at least 95 %.
 * ({@code nm -C} is no oracle: it spells {@code std::string} where c++filt writes the whole
 * {@code std::basic_string<char, ...>}.)
 */
class DemanglerTest {
    private static final Path LIBSTDCXX = Path.of("/usr/lib/x86_64-linux-gnu/libstdc++.so.6");

    /** The defined dynamic symbols of {@code file} as {@code nm -D --defined-only} lists them. */
    private static List<String> dynamicNames(Path file) throws Exception {
        List<String> out = new ArrayList<>();
        for (String line : Gcc.run(List.of("nm", "-D", "--defined-only", file.toString())).split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length == 3) out.add(f[2].replaceAll("@.*$", ""));
        }
        return out;
    }

    /** c++filt given the names as arguments, 500 a call: each answer comes back apart from the batching on stdin. */
    private static Map<String, String> oracle(List<String> names) throws Exception {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i < names.size(); i += 500) {
            List<String> chunk = names.subList(i, Math.min(names.size(), i + 500));
            List<String> cmd = new ArrayList<>(List.of(Demangler.TOOL.toString()));
            cmd.addAll(chunk);
            String[] out = Gcc.run(cmd).split("\n");
            assertThat(out).hasSameSizeAs(chunk.toArray());
            for (int j = 0; j < out.length; j++) m.put(chunk.get(j), out[j]);
        }
        return m;
    }

    @Test
    void libstdcxxNamesEqualTheOracleWhereverDemangled() throws Exception {
        List<String> mangled = dynamicNames(LIBSTDCXX).stream().filter(n -> n.startsWith("_Z")).distinct().toList();
        assertThat(mangled.size()).isGreaterThan(3000);
        Map<String, String> oracle = oracle(mangled);
        long start = System.nanoTime();
        Map<String, String> ours = Demangler.system().demangle(mangled);
        long ms = (System.nanoTime() - start) / 1_000_000;
        ours.forEach((raw, name) -> assertThat(name).as(raw).isEqualTo(oracle.get(raw)));
        long oracleDemangles = mangled.stream().filter(n -> !oracle.get(n).equals(n)).count();
        double coverage = (double) ours.size() / oracleDemangles;
        System.out.printf("demangled %d of %d libstdc++ names the oracle demangles (%.2f %%) in %d ms%n",
                ours.size(), oracleDemangles, 100 * coverage, ms);
        assertThat(coverage).isGreaterThanOrEqualTo(0.95);
    }

    @Test
    void indexChoosesTheSameSymbolsAndOnlySpellsThemDemangled() throws Exception {
        ElfFile elf = ElfFile.read(LIBSTDCXX);
        SymbolIndex raw = SymbolIndex.of(elf, null, Demangler.none());
        SymbolIndex demangled = SymbolIndex.of(elf, null, Demangler.system());
        List<SymbolIndex.Symbol> r = raw.functions(), d = demangled.functions();
        assertThat(d).hasSameSizeAs(r);
        Map<String, String> spelled = Demangler.system().demangle(r.stream().map(s -> s.name().replaceAll("@plt$", "")).toList());
        int changed = 0;
        for (int i = 0; i < r.size(); i++) {
            assertThat(d.get(i).start()).isEqualTo(r.get(i).start());
            String base = r.get(i).name().replaceAll("@plt$", "");
            String expected = spelled.getOrDefault(base, base) + r.get(i).name().substring(base.length());
            assertThat(d.get(i).name()).isEqualTo(expected);
            if (!expected.equals(r.get(i).name())) changed++;
        }
        assertThat(changed).isGreaterThan(1000);
        // a PLT entry keeps its suffix after the demangled name
        assertThat(d).anyMatch(s -> s.name().equals("operator new(unsigned long)@plt"));
        assertThat(raw.objects()).hasSameSizeAs(demangled.objects());
        assertThat(demangled.objects()).anyMatch(s -> s.name().startsWith("vtable for std::"));
    }

    @Test
    void onlyWholeMangledNamesAreSent() {
        assertThat(Demangler.looksMangled("_ZN6shapes3BoxIiE3putEi")).isTrue();
        assertThat(Demangler.looksMangled("_Z3foov.cold")).isTrue();
        assertThat(Demangler.looksMangled("_Z3foov.isra.0")).isTrue();
        assertThat(Demangler.looksMangled("main")).isFalse();
        assertThat(Demangler.looksMangled("_Z")).isFalse();
        assertThat(Demangler.looksMangled("_Z3foov _Z3barv")).isFalse();
        assertThat(Demangler.looksMangled("_Z3foov\n")).isFalse();
        assertThat(Demangler.none().demangle(List.of("_Z3foov"))).isEmpty();
        assertThat(Demangler.system().demangle(List.of("_Z3foov", "_Z3foov.cold", "_Z3barv.isra.0", "main", "_Zbogus")))
                .containsExactlyInAnyOrderEntriesOf(Map.of("_Z3foov", "foo()", "_Z3foov.cold", "foo() [clone .cold]",
                        "_Z3barv.isra.0", "bar() [clone .isra.0]"));
    }

    @Test
    void runsOnlyARootOwnedToolInRootOwnedDirectories(@TempDir Path dir) throws Exception {
        assertThat(Demangler.trusted(Demangler.TOOL)).isNotNull();
        assertThat(Demangler.system().demangles()).isTrue();
        // a copy in a directory others can write (the temporary directory's parent /tmp, or the user's own)
        Path copy = Files.copy(Demangler.trusted(Demangler.TOOL), dir.resolve("c++filt"));
        assertThat(Demangler.trusted(copy)).isNull();
        assertThat(Demangler.trusted(dir.resolve("missing"))).isNull();
    }
}
