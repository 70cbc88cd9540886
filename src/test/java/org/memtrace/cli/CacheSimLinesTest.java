package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;

/**
 * {@code memtrace cachesim --lines} on the cachelines fixture (-g): each source line's misses must be the
 * sum of the misses of the instructions that binutils' addr2line puts on that line (instruction addresses
 * from nm's symbols plus the offsets in the instruction names), and the strided loop's line leads.
 */
class CacheSimLinesTest {
    @TempDir static Path dir;
    static Path exe, stream;
    static JsonNode sim;
    static String text;

    @BeforeAll
    static void simulate() throws Exception {
        exe = Gcc.compile(dir, "cachelines.c", "cachelines", "-O1", "-g", "-no-pie");
        stream = dir.resolve("cl.stream");
        var r = Cli.run(dir, "run", "--mode", "fault", "-q", "-o", "/dev/null", "--save-stream", stream.toString(), "--", exe.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        Path json = dir.resolve("sim.json");
        r = Cli.run(dir, "cachesim", stream.toString(), "--lines", "--top", "100000", "--json", json.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        text = r.stdout();
        sim = new ObjectMapper().readTree(json.toFile());
    }

    /** The line of the fixture's source that carries {@code marker}, as file:line with the file's base name. */
    private static String line(String marker) throws Exception {
        List<String> lines = Files.readAllLines(dir.resolve("cachelines.c"));
        for (int i = 0; i < lines.size(); i++) if (lines.get(i).contains(marker)) return "cachelines.c:" + (i + 1);
        throw new AssertionError(marker);
    }

    private static String base(String fileLine) {
        String s = fileLine.replaceAll(" \\(discriminator \\d+\\)$", "");
        return s.substring(s.lastIndexOf('/') + 1);
    }

    @Test
    void eachLineHoldsTheMissesOfItsInstructionsAsAddr2lineSaysThem() throws Exception {
        Map<String, Long> symbols = new HashMap<>();
        for (String l : Gcc.run(List.of("nm", exe.toString())).split("\n")) {
            String[] f = l.trim().split("\\s+");
            if (f.length == 3 && (f[1].equals("T") || f[1].equals("t"))) symbols.put(f[2], Long.parseLong(f[0], 16));
        }
        // the fixture's own instructions, by address, with their L1 misses
        Map<Long, Long> misses = new TreeMap<>();
        for (JsonNode i : sim.get("instructionsByFirstLevelMisses")) {
            String name = i.get("name").asText();
            int plus = name.lastIndexOf('+');
            String function = plus < 0 ? name : name.substring(0, plus);
            if (!symbols.containsKey(function)) continue;
            misses.put(symbols.get(function) + (plus < 0 ? 0 : Long.parseLong(name.substring(plus + 1))), i.get("firstLevel").asLong());
        }
        assertThat(misses).isNotEmpty();
        List<String> command = new ArrayList<>(List.of("addr2line", "-e", exe.toString()));
        misses.keySet().forEach(a -> command.add("0x" + Long.toHexString(a)));
        String[] where = Gcc.run(command).split("\n");
        Map<String, Long> expected = new TreeMap<>();
        int k = 0;
        long unknown = 0;
        for (Map.Entry<Long, Long> e : misses.entrySet()) {
            String at = base(where[k++]);
            // crtstuff.c:? and the like: code of the program without a line, counted apart
            if (at.startsWith("cachelines.c:")) expected.merge(at, e.getValue(), Long::sum);
            else if (at.endsWith(":?")) unknown += e.getValue();
        }
        assertThat(sim.get("missesWithoutLine").get("firstLevel").asLong()).isGreaterThanOrEqualTo(unknown);
        Map<String, Long> actual = new TreeMap<>();
        for (JsonNode l : sim.get("linesByFirstLevelMisses"))
            if (base(l.get("name").asText()).startsWith("cachelines.c:")) actual.put(base(l.get("name").asText()), l.get("firstLevel").asLong());
        assertThat(actual).isEqualTo(expected);
        // 4,096 stores, each to a line of its own; the small array's 1 KiB is 16 lines, missed on the first pass
        assertThat(actual.get(line("STRIDED"))).isEqualTo(4096);
        assertThat(actual.get(line("SMALL"))).isEqualTo(16);
        assertThat(base(sim.get("linesByFirstLevelMisses").get(0).get("name").asText())).isEqualTo(line("STRIDED"));
    }

    @Test
    void textListsTheLinesAndWhatHasNone() throws Exception {
        assertThat(text).contains("top source lines by L1 misses");
        assertThat(text).containsPattern("\\n\\s+4,096  \\S*" + line("STRIDED").replace(".", "\\.") + "\\n");
        long none = sim.get("missesWithoutLine").get("firstLevel").asLong();
        long all = sim.get("levels").get(0).get("misses").asLong(), lines = 0;
        for (JsonNode l : sim.get("linesByFirstLevelMisses")) lines += l.get("firstLevel").asLong();
        assertThat(lines + none).isEqualTo(all);
    }

    /**
     * {@code --annotate} (one level): the fixture's source with the loads, stores and L1 misses of each line
     * beside it, cg_annotate's columns; the strided loop's 4,096 stores each miss, the small array's 16,384
     * loads miss 16 times. A file that cannot be read is named with the reason.
     */
    @Test
    void annotateShowsTheSourceWithItsCounts() throws Exception {
        var r = Cli.run(dir, "cachesim", stream.toString(), "--annotate");
        assertThat(r.status()).as(r.stderr()).isZero();
        Path source = dir.resolve("cachelines.c");
        List<String> lines = Files.readAllLines(source);
        String strided = lines.get(Integer.parseInt(line("STRIDED").split(":")[1]) - 1);
        String small = lines.get(Integer.parseInt(line("SMALL").split(":")[1]) - 1);
        assertThat(r.stdout()).contains("-- annotated source: " + source + "\n")
                .contains(String.format("%12s%12s%12s%12s%n", "Dr", "Dw", "L1mr", "L1mw"))
                .contains(String.format("%12s%,12d%12s%,12d  %s%n", ".", 4096, ".", 4096, strided))
                .contains(String.format("%,12d%12s%,12d%12s  %s%n", 64 * 256, ".", 16, ".", small))
                // a line without an access: dots
                .contains(String.format("%12s%12s%12s%12s  %s%n", ".", ".", ".", ".", "int main(void) {"));
        Path moved = dir.resolve("cachelines.c.away");
        Files.move(source, moved);
        try {
            r = Cli.run(dir, "cachesim", stream.toString(), "--annotate");
        } finally {
            Files.move(moved, source);
        }
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).contains("-- annotated source: " + source + "\n" + "-".repeat(80) + "\n  source not shown: not found\n");
    }

    @Test
    void linesNeedOneCore() throws Exception {
        var r = Cli.run(dir, "cachesim", stream.toString(), "--lines", "--cores", "2");
        assertThat(r.status()).isEqualTo(2);
        assertThat(r.stderr()).contains("--lines works on one core");
    }
}
