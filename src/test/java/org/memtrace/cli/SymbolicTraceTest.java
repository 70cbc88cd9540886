package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TraceFile;
import org.memtrace.testutil.TraceFile.Line;

/** Golden properties of symbolic traces of real programs, end to end through memtrace run. */
class SymbolicTraceTest {
    @TempDir static Path dir;

    @BeforeAll
    static void build() throws Exception {
        Gcc.compile(dir, Path.of("examples/disparity.c").toAbsolutePath().toString(), "disparity", "-g");
        Gcc.compile(dir, "symbolic.c", "symbolic", "-g");
    }

    private static TraceFile trace(String program) throws Exception {
        Path out = dir.resolve(program + ".trace");
        var r = Cli.run(dir, "run", "--mode", "fault", "-q", "-o", out.toString(), "--", dir.resolve(program).toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        return TraceFile.read(out);
    }

    /** Listing 1/2 of the MadT paper: findDisparity over three 10x13 arrays made by helper functions. */
    @Test
    void findDisparityReadsAsInTheMadtPaper() throws Exception {
        TraceFile t = trace("disparity");
        List<Line> handles = t.of('M').stream().filter(l -> l.field(0).contains("MallocHandle+")).toList();
        assertThat(handles).extracting(l -> l.field(0).replaceAll("[0-9]{4,}", "N"))
                .containsExactly("<mallocN@fMallocHandle+45>", "<mallocN@iMallocHandle+45>", "<mallocN@fMallocHandle+45>");
        assertThat(handles).allSatisfy(l -> assertThat(l.field(1)).isEqualTo("528"));
        String retSAD = handles.get(2).field(0);

        List<Line> reads = t.of('L').stream()
                .filter(l -> l.field(2).startsWith("findDisparity+") && l.field(0).startsWith(retSAD + "+")).toList();
        assertThat(reads).allSatisfy(l -> assertThat(l.field(1)).isEqualTo("[heap]"));
        // per iteration: the width at offset 0, then data[i*13+j] at 8 + 4*(i*13+j)
        List<Integer> offsets = reads.stream().map(l -> Integer.parseInt(l.field(0).substring(retSAD.length() + 1))).toList();
        List<Integer> expected = IntStream.range(0, 130).boxed().flatMap(k -> java.util.stream.Stream.of(0, 8 + 4 * k)).toList();
        assertThat(offsets).isEqualTo(expected);
        assertThat(reads.get(1).field(3)).isEqualTo("4");
        assertThat(t.of('F')).extracting(l -> l.field(0)).contains(retSAD.replace("<malloc", "<freed:"));
    }

    @Test
    void globalsStaticsUseAfterFreeAndLibrariesResolve() throws Exception {
        TraceFile t = trace("symbolic");
        assertThat(t.of('S')).anySatisfy(l -> {
            assertThat(l.field(0)).isEqualTo("table[10]+0");
            assertThat(l.field(1)).isEqualTo("symbolic");
            assertThat(l.field(2)).startsWith("main+");
            assertThat(l.field(3)).isEqualTo("4");
        });
        // counter++ is one read-modify-write or a load and a store: either way both directions, 8 bytes
        assertThat(t.of('L')).anySatisfy(l -> assertThat(l.fields().subList(0, 4)).containsExactly("counter+0", "symbolic", l.field(2), "8"));
        assertThat(t.of('S')).anySatisfy(l -> assertThat(l.field(0)).isEqualTo("counter+0"));
        assertThat(t.of('L')).filteredOn(l -> l.field(0).equals("counter+0")).allSatisfy(l -> assertThat(l.field(2)).startsWith("tick+"));

        Line malloc = t.of('M').stream().filter(l -> l.field(1).equals("64")).findFirst().orElseThrow();
        String block = malloc.field(0);
        assertThat(block).matches("<malloc[0-9]{4,}@main\\+[0-9]+>");
        String freed = block.replace("<malloc", "<freed:");
        assertThat(t.of('F')).extracting(l -> l.field(0)).contains(freed);
        assertThat(t.of('S')).anySatisfy(l -> assertThat(l.field(0)).isEqualTo(block + "+12"));
        assertThat(t.of('L')).anySatisfy(l -> {
            assertThat(l.field(0)).isEqualTo(freed + "+12");
            assertThat(l.field(2)).startsWith("main+");
        });

        // a mapped file's region is the file's name
        Line mmap = t.of('P').stream().findFirst().orElseThrow();
        assertThat(mmap.field(0)).matches("<memmap[0-9]{4,}@main\\+[0-9]+>");
        assertThat(t.of('L')).anySatisfy(l -> assertThat(l.fields().subList(0, 2)).containsExactly(mmap.field(0) + "+0", "passwd"));

        // after a failed exec the same program goes on, and so do its names
        assertThat(t.comments()).anyMatch(c -> c.startsWith("exec /nonexistent/program"));
        assertThat(t.of('S')).anySatisfy(l -> assertThat(l.fields().subList(0, 4)).containsExactly("table[2]+0", "symbolic", l.field(2), "4"));

        // the program's copy of stdout (a copy relocation) and a library function reading a global string
        assertThat(t.of('L')).anySatisfy(l -> {
            assertThat(l.field(0)).isEqualTo("stdout+0");
            assertThat(l.field(2)).startsWith("main+");
        });
        assertThat(t.of('L')).anySatisfy(l -> {
            assertThat(l.field(0)).startsWith("message[");
            assertThat(l.field(2)).containsPattern("^__strlen_[a-z0-9]+\\+[0-9]+$");
        });
    }
}
