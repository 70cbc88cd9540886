package org.memtrace.rewrite;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.symbols.DwarfLocals;
import org.memtrace.symbols.ElfFile;
import org.memtrace.testutil.Gcc;

/**
 * run --check's table ({@link FrameTable}) made by a cold check plan from the DWARF the plan read is the table
 * the run would read from the executable itself, byte for byte; a warm plan hands none (the run reads it); a
 * library's and a trace's plan make none; an executable with no DWARF has none to give.
 */
class FrameTableTest {
    @TempDir Path dir;

    private Path program(String opt) throws Exception {
        Files.writeString(dir.resolve("p.c"), """
                #include <string.h>
                volatile int sink;
                __attribute__((noinline)) int sum(const int *a, int n) { int s = 0; for (int i = 0; i < n; i++) s += a[i]; return s; }
                __attribute__((noinline)) int fill(int n) { int buf[8]; memset(buf, 0, sizeof buf); buf[n & 7] = n; return sum(buf, 8); }
                int main(int argc, char **argv) { char tag[4]; tag[argc & 3] = 1; sink = tag[0]; return fill(argc) & 1; }
                """);
        return Gcc.compile(dir, "p.c", "p" + opt, opt, "-g");
    }

    @Test
    void aColdCheckPlanHandsTheTableTheExecutableGives() throws Exception {
        for (String opt : new String[] {"-O0", "-O2"}) {
            Path exe = program(opt), cache = Files.createDirectories(dir.resolve("cache" + opt));
            PlanChoice check = PlanChoice.probing(Probes.CHECK);
            ModuleRewrite.Prepared cold = ModuleRewrite.prepare(exe, cache, check);
            FrameTable read = FrameTable.of(exe);
            assertThat(read.bytes()).as(opt).isNotNull();
            assertThat(cold.frames()).as(opt).hasValueSatisfying(t -> assertThat(t.bytes()).isEqualTo(read.bytes()));
            assertThat(ModuleRewrite.prepare(exe, cache, check).frames()).as("warm " + opt).isEmpty();
            assertThat(ModuleRewrite.prepare(exe, Files.createDirectories(dir.resolve("trace" + opt))).frames()).as("a trace").isEmpty();
        }
    }

    @Test
    void theTableHasTheFunctionsOfBothReadings() throws Exception {
        Path exe = program("-O2");
        ElfFile elf = ElfFile.read(exe);
        DwarfLocals.Frames dwarf = DwarfLocals.readAll(elf);
        assertThat(dwarf.framed()).isEmpty(); // -O2: no frame pointer
        assertThat(dwarf.optimised()).extracting(DwarfLocals.Function::name).contains("fill", "main");
        // fill calls with one CFA: its frame is found from the call, so the table names its buf
        String text = new String(FrameTable.of(exe).bytes(), java.nio.charset.StandardCharsets.ISO_8859_1);
        assertThat(text).contains("fill\0", "buf\0");
        assertThat(FrameTable.of(elf, DwarfLocals.Frames.NONE, java.util.Map.of()).bytes()).as("no functions, still lines")
                .isNotNull().isNotEqualTo(FrameTable.of(exe).bytes());
    }

    @Test
    void noDwarfNoTable() throws Exception {
        Path exe = Gcc.compile(dir, writeMain(), "plain", "-O2", "-s");
        assertThat(FrameTable.of(exe).bytes()).isNull();
        assertThat(FrameTable.of(dir.resolve("missing")).bytes()).isNull();
    }

    private String writeMain() throws Exception {
        Files.writeString(dir.resolve("m.c"), "int main(void) { return 0; }\n");
        return "m.c";
    }
}
