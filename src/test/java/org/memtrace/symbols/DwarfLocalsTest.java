package org.memtrace.symbols;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Gcc;

/**
 * The stack variables run --check reads from DWARF: a function with a frame pointer lists its fbreg variables and
 * parameters with their sizes and lines (DWARF 4 and 5), one without (-O2) is left out, and the agent's table
 * holds them all with the line table.
 */
class DwarfLocalsTest {
    private static final String SOURCE = """
            struct rec { int id; char name[20]; };
            int use(char *p, struct rec *r);
            int f(int n)
            {
                char buf[16];
                struct rec r;
                long total = n;
                return use(buf, &r) + (int)total;
            }
            int use(char *p, struct rec *r) { return p[0] + r->id; }
            int main(void) { return f(1); }
            """;

    @Test
    void framedFunctionsListTheirVariablesWithSizesAndLines(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("l.c"), SOURCE);
        for (String dwarf : List.of("-gdwarf-4", "-gdwarf-5")) {
            Path prog = dir.resolve("l" + dwarf);
            Gcc.run(List.of("gcc", "-O0", dwarf, "-o", prog.toString(), dir.resolve("l.c").toString()));
            ElfFile elf = ElfFile.read(prog);
            List<DwarfLocals.Function> fs = DwarfLocals.read(elf);
            DwarfLocals.Function f = fs.stream().filter(x -> x.name().equals("f")).findFirst().orElseThrow();
            assertThat(f.locals()).extracting(DwarfLocals.Local::name).containsExactly("n", "buf", "r", "total");
            assertThat(f.locals()).extracting(DwarfLocals.Local::size).containsExactly(4L, 16L, 24L, 8L);
            assertThat(f.locals()).extracting(DwarfLocals.Local::line).containsExactly(3, 5, 6, 7);
            // below the CFA, and no two overlap
            for (DwarfLocals.Local a : f.locals()) {
                assertThat(a.cfaOffset() + a.size()).isLessThanOrEqualTo(0);
                for (DwarfLocals.Local b : f.locals())
                    if (a != b) assertThat(a.cfaOffset() + a.size() <= b.cfaOffset() || b.cfaOffset() + b.size() <= a.cfaOffset()).isTrue();
            }
            assertThat(f.high()).isGreaterThan(f.low());
            assertThat(fs).allMatch(DwarfLocals.Function::unoptimised); // "GNU C17 ... -O0" in the unit's producer
            assertThat(fs).extracting(DwarfLocals.Function::name).contains("use", "f");

            byte[] table = DwarfLocals.encode(fs, DwarfLines.read(elf, elf.loadSegments()));
            ByteBuffer b = ByteBuffer.wrap(table).order(ByteOrder.LITTLE_ENDIAN);
            assertThat(new String(table, 0, 8)).isEqualTo("MTLOCAL1");
            int nfn = b.getInt(8), nvar = b.getInt(12), nrow = b.getInt(16), nfile = b.getInt(20), nstr = b.getInt(24);
            assertThat(nfn).isEqualTo(fs.size());
            assertThat(nvar).isEqualTo(fs.stream().mapToInt(x -> x.locals().size()).sum());
            assertThat(nrow).isPositive();
            assertThat(nfile).isPositive();
            assertThat(table.length).isEqualTo(28 + nfn * 32 + nvar * 24 + nrow * 16 + nfile * 4 + nstr);
        }
    }

    /**
     * Whether every frame variable is known (FrameConstants classifies only those functions): a VLA's location
     * is an expression of the frame, a variadic function's register save area is in no variable; a static
     * local is at its own address and leaves the function described.
     */
    @Test
    void aFunctionIsDescribedWhenDwarfPlacesEveryFrameVariable(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("d.c"), """
                #include <stdarg.h>
                int plain(int n) { static int calls; int a[4] = {n}; calls++; return a[0] + calls; }
                int vla(int n) { int v[n]; int k = 1; v[0] = k; return v[0]; }
                int vsum(int n, ...) { va_list ap; va_start(ap, n); int s = va_arg(ap, int); va_end(ap); return s + n; }
                int main(void) { return plain(1) + vla(2) + vsum(1, 2); }
                """);
        Path prog = dir.resolve("d");
        Gcc.run(List.of("gcc", "-O0", "-g", "-o", prog.toString(), dir.resolve("d.c").toString()));
        var byName = new java.util.HashMap<String, Boolean>();
        for (DwarfLocals.Function f : DwarfLocals.read(ElfFile.read(prog))) byName.put(f.name(), f.described());
        assertThat(byName).containsEntry("plain", true)
                .containsEntry("vla", false).containsEntry("vsum", false);
    }

    /**
     * g++ defines a function of a namespace or a class by a DIE with no name, only DW_AT_specification to its
     * declaration (in the namespace's or the class's DIE): it is named from there and has its variables.
     */
    @Test
    void cxxFunctionsOfANamespaceOrAClassHaveTheirVariables(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("n.cc"), """
                namespace ns {
                struct packet { int header; char payload[16]; };
                static int fill(unsigned long n) { packet p{}; for (unsigned long i = 0; i < n; i++) p.payload[i] = 'p'; return p.header; }
                struct log { int add(int n); };
                int log::add(int n) { char line[6] = {0}; return line[n]; }
                int use() { log l; return fill(3) + l.add(1); }
                }
                int main() { return ns::use(); }
                """);
        Path prog = dir.resolve("n");
        Gcc.run(List.of("g++", "-O0", "-g", "-o", prog.toString(), dir.resolve("n.cc").toString()));
        var byName = new java.util.HashMap<String, List<String>>();
        for (DwarfLocals.Function f : DwarfLocals.read(ElfFile.read(prog)))
            byName.put(f.name(), f.locals().stream().map(l -> l.name() + "/" + l.size()).toList());
        assertThat(byName).containsEntry("fill", List.of("n/8", "p/20", "i/8"))
                .containsEntry("add", List.of("this/8", "n/4", "line/6"));
        for (DwarfLocals.Function f : DwarfLocals.readOptimised(ElfFile.read(prog)))
            if (f.name().equals("fill")) assertThat(f.locals()).extracting(DwarfLocals.Local::name).containsExactly("n", "p", "i");
    }

    @Test
    void optimisedCodeWithoutAFramePointerIsLeftOut(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("l.c"), SOURCE);
        Path prog = dir.resolve("l");
        Gcc.run(List.of("gcc", "-O2", "-g", "-o", prog.toString(), dir.resolve("l.c").toString()));
        assertThat(DwarfLocals.read(ElfFile.read(prog))).isEmpty();
        Path plain = dir.resolve("p");
        Gcc.run(List.of("gcc", "-O0", "-o", plain.toString(), dir.resolve("l.c").toString()));
        assertThat(DwarfLocals.read(ElfFile.read(plain))).isEmpty();
    }

    @Test
    void theProducerSaysWhetherGccOptimised() {
        assertThat(DwarfLocals.unoptimised("GNU C17 12.2.0 -mtune=generic -march=x86-64 -g -O0")).isTrue();
        assertThat(DwarfLocals.unoptimised("GNU C17 12.2.0 -mtune=generic -march=x86-64 -g")).isTrue();
        assertThat(DwarfLocals.unoptimised("GNU C17 12.2.0 -mtune=generic -march=x86-64 -g -O2")).isFalse();
        assertThat(DwarfLocals.unoptimised("GNU C17 12.2.0 -mtune=generic -g -Og")).isFalse();
        assertThat(DwarfLocals.unoptimised("GNU C17 12.2.0 -O2 -O0 -g")).isFalse(); // not worked out: taken as optimised
        assertThat(DwarfLocals.unoptimised("GNU C17 12.2.0")).isFalse(); // switches not recorded
        assertThat(DwarfLocals.unoptimised("clang version 16.0.6")).isFalse();
        assertThat(DwarfLocals.unoptimised(null)).isFalse();
    }
}
