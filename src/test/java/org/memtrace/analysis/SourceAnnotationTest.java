package org.memtrace.analysis;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.event.Event;
import org.memtrace.trace.Naming;

/** Lines summed per file:line, files ranked, chunks of context merged and cut to the file, problems said. */
class SourceAnnotationTest {
    @TempDir Path dir;

    /** Instruction {@code ip} lies on the line {@code lines.get(ip)}; ips past the map have none. */
    private record Lines(Map<Long, String> lines) implements Naming {
        @Override public void observe(Event event) {}
        @Override public String region(long address) { return "[anon]"; }
        @Override public String data(long address) { return "x"; }
        @Override public String code(long ip) { return "f+" + ip; }
        @Override public String block(Event.Alloc allocation) { return NO_BLOCK; }
        @Override public String source(long ip) { return lines.get(ip); }
    }

    @Test
    void linesFilesAndChunks() throws Exception {
        Path a = dir.resolve("a.c");
        List<String> text = new ArrayList<>();
        for (int i = 1; i <= 100; i++) text.add("line " + i + (i == 50 ? " <b>&amp;</b>" : ""));
        Files.write(a, text);
        InstructionCounts counts = new InstructionCounts();
        // a.c:10 (two instructions: 3 loads, one an L1 and LL miss), a.c:20 (a store, L1 miss),
        // a.c:50 and a.c:98 (a load each), b.c:1 (missing file: 2 store misses), ip 9: no line
        counts.add(1, false, 1L | 1L << 32);
        counts.add(1, false, 0);
        counts.add(2, false, 0);
        counts.add(3, true, 1);
        counts.add(4, false, 0);
        counts.add(5, false, 0);
        counts.add(6, true, 1);
        counts.add(6, true, 1);
        counts.add(9, false, 1);
        SourceAnnotation s = new SourceAnnotation(counts, new Lines(Map.of(1L, a + ":10", 2L, a + ":10", 3L, a + ":20",
                4L, a + ":50", 5L, a + ":98", 6L, dir.resolve("b.c") + ":1")), ip -> ip);
        assertThat(s.top(10)).extracting(SourceAnnotation.Line::name)
                .containsExactly(dir.resolve("b.c") + ":1", a + ":10", a + ":20", a + ":50", a + ":98");
        assertThat(s.top(10).get(1).counts()).containsExactly(3, 0, 1, 0, 1, 0);
        assertThat(s.withoutLine()).containsExactly(1, 0, 1, 0, 0, 0);
        assertThat(s.total()).containsExactly(6, 3, 2, 3, 1, 0);

        List<SourceAnnotation.AnnotatedFile> files = s.files(5, List.of());
        // b.c and a.c have 2 L1 misses each; a.c has a last-level one too: a.c first
        assertThat(files).extracting(SourceAnnotation.AnnotatedFile::path).containsExactly(a.toString(), dir.resolve("b.c").toString());
        SourceAnnotation.AnnotatedFile fa = files.get(0);
        assertThat(fa.problem()).isNull();
        assertThat(fa.totals()).containsExactly(5, 1, 1, 1, 1, 0);
        // 10 and 20 (2..18, 12..28) merge into 2..28; 50 is 42..58; 98 is 90..100 (cut at the file's end)
        assertThat(fa.chunks()).extracting(SourceAnnotation.Chunk::first).containsExactly(2, 42, 90);
        assertThat(fa.chunks().get(0).text()).hasSize(27).startsWith("line 2").endsWith("line 28");
        assertThat(fa.chunks().get(0).counts()).containsOnlyKeys(10, 20);
        assertThat(fa.chunks().get(1).text()).contains("line 50 <b>&amp;</b>");
        assertThat(fa.chunks().get(2).text()).hasSize(11).endsWith("line 100");
        assertThat(files.get(1).problem()).isEqualTo("not found");
        assertThat(files.get(1).chunks()).isEmpty();

        StringWriter out = new StringWriter();
        SourceAnnotation.print(new PrintWriter(out, true), files.subList(0, 1), null);
        assertThat(out.toString()).contains(String.format("%,12d%12s%,12d%12s  line 10%n", 3, ".", 1, "."))
                .contains(String.format("%12s%12s%12s%12s  line 11%n", ".", ".", ".", "."))
                .contains("-- line 42 ---").doesNotContain("line 29\n").doesNotContain("line 1\n");
    }

    /** A path relative to the compilation directory: looked up in the --source-dir directories, else said not found. */
    @Test
    void relativePathsAreLookedUpInTheSourceDirectories() throws Exception {
        Files.createDirectories(dir.resolve("src"));
        Files.write(dir.resolve("src/rel.c"), List.of("int x;", "int main(void) { return x; }"));
        InstructionCounts counts = new InstructionCounts();
        counts.add(1, false, 1);
        SourceAnnotation s = new SourceAnnotation(counts, new Lines(Map.of(1L, "src/rel.c:2")), ip -> ip);
        SourceAnnotation.AnnotatedFile found = s.files(1, List.of(dir.resolve("nothing"), dir)).getFirst();
        assertThat(found.path()).isEqualTo("src/rel.c");
        assertThat(found.problem()).isNull();
        assertThat(found.chunks().getFirst().text()).containsExactly("int x;", "int main(void) { return x; }");
        assertThat(s.files(1, List.of(dir.resolve("nothing"))).getFirst().problem())
                .isEqualTo("not found (relative to the compilation directory; looked up in --source-dir and the current directory)");
    }

    @Test
    void aFileShorterThanItsLinesIsSaidChanged() throws Exception {
        Path a = dir.resolve("short.c");
        Files.write(a, List.of("one", "two"));
        InstructionCounts counts = new InstructionCounts();
        counts.add(1, false, 1);
        SourceAnnotation.AnnotatedFile f = new SourceAnnotation(counts, new Lines(Map.of(1L, a + ":7")), ip -> ip).files(1, List.of()).getFirst();
        assertThat(f.problem()).isEqualTo("the file has 2 lines but the line table names line 7: it changed since it was compiled");
        assertThat(f.chunks()).isEmpty();
        Path fifo = dir.resolve("fifo.c");
        new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor();
        f = new SourceAnnotation(counts, new Lines(Map.of(1L, fifo + ":1")), ip -> ip).files(1, List.of()).getFirst();
        assertThat(f.problem()).isEqualTo("not a regular file");
    }
}
