package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.MadtGrammar;
import org.memtrace.testutil.TraceFile;
import org.memtrace.testutil.TraceFile.Line;

/**
 * fields.c traced end to end, in fault mode and compiled in: every store of main and touch_static names its
 * global down to the field and index, the same in both modes; without -g the names are those of before.
 */
class FieldNamesTest {
    @TempDir Path dir;

    /** main's stores in source order, then touch_static's (the static local keeps gcc's ELF name). */
    private static final List<String> STORES = List.of(
            "table[3].value+0", "grid[2][5]+0", "cfg.inner.flags+0", "u.asInt+0", "bf.lo+0", "bf.after+0",
            "an.i+0", "an.q+0", "qualified[1].key+0", "rows[1].name[2]+0", "rows[1].cells[2]+0", "counter_s+0",
            "remembered.0.value+0");

    private static List<String> names(TraceFile t, char kind) {
        List<String> names = new ArrayList<>();
        for (Line l : t.of(kind)) {
            if (l.field(1).startsWith("fields") && (l.field(2).startsWith("main+") || l.field(2).startsWith("touch_static+"))) {
                names.add(l.field(0));
            }
        }
        return names;
    }

    private static void assertNamed(TraceFile t, List<String> lines) {
        assertThat(lines).allSatisfy(l -> assertThat(MadtGrammar.check(l)).as(l).isNull());
        assertThat(names(t, 'S')).isEqualTo(STORES);
        // bf.mid = 5 reads the bit-fields' storage before writing it back; an.f = 7.0f loads its constant from
        // .rodata, which no symbol covers (named by the module, program+offset); nothing else in main reads memory
        assertThat(names(t, 'L')).hasSize(2).contains("bf.lo+0").anySatisfy(n -> assertThat(n).startsWith(t.of('L').stream()
                .filter(l -> l.field(0).equals("bf.lo+0")).findFirst().orElseThrow().field(1) + "+"));
        assertThat(t.of('S')).filteredOn(l -> l.field(0).equals("rows[1].name[2]+0")).singleElement()
                .satisfies(l -> assertThat(l.field(3)).isEqualTo("1"));
        assertThat(t.of('S')).filteredOn(l -> l.field(0).equals("an.q+0")).singleElement()
                .satisfies(l -> assertThat(l.field(3)).isEqualTo("2"));
    }

    @Test
    void faultModeNamesFields() throws Exception {
        for (String dwarf : List.of("-gdwarf-4", "-gdwarf-5")) {
            Path exe = Gcc.compile(dir, "fields.c", "fields" + dwarf.charAt(8), dwarf);
            Path out = dir.resolve("fault" + dwarf + ".trace");
            var r = Cli.run(dir, "run", "--mode", "fault", "-q", "-o", out.toString(), "--", exe.toString());
            assertThat(r.status()).as(r.stderr()).isZero();
            assertNamed(TraceFile.read(out), java.nio.file.Files.readAllLines(out));
        }
    }

    @Test
    void compiledInNamesFieldsAlike() throws Exception {
        Gcc.compile(dir, "fields.c", "unused"); // puts the fixture's source in dir
        List<String> build = new ArrayList<>(Cli.command("cc"));
        build.addAll(List.of("-O0", "-g", "-o", dir.resolve("fields-cc").toString(), dir.resolve("fields.c").toString()));
        Gcc.run(build);
        Path mtr = dir.resolve("fields.mtr");
        Gcc.run(List.of(dir.resolve("fields-cc").toString()), Map.of("MEMTRACE_OUT", mtr.toString()));
        Path out = dir.resolve("cc.trace");
        var printed = Cli.run(dir, "print", "-q", "-o", out.toString(), mtr.toString());
        assertThat(printed.status()).as(printed.stderr()).isZero();
        assertNamed(TraceFile.read(out), java.nio.file.Files.readAllLines(out));
    }

    @Test
    void withoutDebugInformationNamesStayAsBefore() throws Exception {
        Path exe = Gcc.compile(dir, "fields.c", "fields-plain");
        Path out = dir.resolve("plain.trace");
        var r = Cli.run(dir, "run", "--mode", "fault", "-q", "-o", out.toString(), "--", exe.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(names(TraceFile.read(out), 'S')).containsExactly(
                "table+28", "grid+84", "cfg+8", "u+0", "bf+0", "bf+4", "an+4", "an+10", "qualified+8", "rows+34",
                "rows+28", "counter_s+0", "remembered.0+4");
    }
}
