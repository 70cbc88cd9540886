package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.memtrace.mtr.MtrFile;
import org.memtrace.mtr.MtrReader;
import org.memtrace.mtr.SkeletonTable;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;

/**
 * Skeleton traces of a program whose loop nests lie in several object files (issue 27): each object's part of the
 * linked {@code memtrace_skel} section numbers its nests' inner loops from its own first loop record
 * ({@code format.SkeletonParts}), so the reader must count within the part. Three objects (skel_link_main.c,
 * skel_link_stencil.c, skel_link_blur.c), each with nests two and three loops deep, are linked in several orders,
 * compiled in one call or apart, and each build's skeleton trace must print (exit 0, no record left out) the full
 * build's trace event for event, compared as {@link SkeletonTraceTest} compares (code fields reduced to their
 * function; both builds non-PIE with .data and the read-only segment at fixed addresses, no address randomization).
 */
class SkeletonLinkTest {
    @TempDir static Path dir;

    @BeforeAll
    static void fixture() throws Exception {
        for (String c : List.of("skel_link_main.c", "skel_link_stencil.c", "skel_link_blur.c")) {
            try (InputStream in = SkeletonLinkTest.class.getResourceAsStream("/c/" + c)) {
                Files.copy(in, dir.resolve(c));
            }
        }
    }

    /** A build's printed trace, its program's output, its trace file and the binary. */
    private record Printed(List<String> lines, String stdout, String stderr, Path mtr, Path prog) {}

    /**
     * Builds the objects named in {@code order} (main, stencil, blur) into one program, in one {@code memtrace cc}
     * call or each compiled with {@code -c} and then linked, runs it and prints its trace.
     */
    private static Printed build(String opt, List<String> order, boolean apart, boolean skeleton) throws Exception {
        Path out = dir.resolve(String.join("-", order) + opt + (apart ? "apart" : "") + (skeleton ? "skel" : "full"));
        Files.createDirectories(out);
        List<String> cc = new ArrayList<>(Cli.command("cc"));
        if (skeleton) cc.add("--skeleton");
        cc.add(opt);
        List<String> inputs = new ArrayList<>();
        for (String name : order) {
            Path source = dir.resolve("skel_link_" + name + ".c");
            if (!apart) {
                inputs.add(source.toString());
                continue;
            }
            Path object = out.resolve(name + ".o");
            List<String> compile = new ArrayList<>(cc);
            compile.addAll(List.of("-c", "-o", object.toString(), source.toString()));
            Gcc.run(compile);
            inputs.add(object.toString());
        }
        Path prog = out.resolve("prog");
        cc.addAll(List.of("-no-pie", "-Wl,-Tdata=0x10000000", "-Wl,-Trodata-segment=0x8000000", "-o", prog.toString()));
        cc.addAll(inputs);
        Gcc.run(cc);
        Path mtr = out.resolve("prog.mtr");
        List<String> same = SkeletonSizeTest.sameConditions(prog);
        String stdout = Gcc.run(same != null ? same : List.of("setarch", "x86_64", "-R", prog.toString()), Map.of("MEMTRACE_OUT", mtr.toString()));
        Path text = out.resolve("prog.trace");
        var printed = Cli.run(dir, "print", "--addresses", "both", "-o", text.toString(), mtr.toString());
        assertThat(printed.status()).as(printed.stderr()).isZero();
        assertThat(printed.stderr()).doesNotContain("memtrace:"); // no table refused, no record left out
        return new Printed(Files.readAllLines(text), stdout, printed.stderr(), mtr, prog);
    }

    /**
     * The skeleton build's trace is the full build's, and the outer loops that run their inner loops whole (the
     * loops whose records start a run) lie in every object, as gcc 12 lays the functions out: at -O1 main's 2D fill,
     * both stencils (the 3D one three loops deep), the blur and the channel sums; at -O2 main's three fills (the 3D
     * one three deep), the triangle, both stencils and the channel sums (the blur's outer loop is declined: its
     * inner loop runs 28 times with records of its own). Listed as function/depth, sorted.
     */
    @ParameterizedTest(name = "{0}: {1}, compiled apart {2}")
    @CsvSource({
        "-O1, main stencil blur, false, 'blur/2, channels/2, main/2, stencil2d/2, stencil3d/3'",
        "-O2, main stencil blur, false, 'channels/2, main/2, main/2, main/3, stencil2d/2, stencil3d/3, triangle/2'",
        "-O2, blur stencil main, true, 'channels/2, main/2, main/2, main/3, stencil2d/2, stencil3d/3, triangle/2'",
        "-O1, stencil blur main, true, 'blur/2, channels/2, main/2, stencil2d/2, stencil3d/3'"})
    void nestsInSeveralObjectsReplayAsTheFullBuildsTrace(String opt, String order, boolean apart, String nests) throws Exception {
        List<String> objects = List.of(order.split(" "));
        Printed full = build(opt, objects, apart, false);
        Printed skel = build(opt, objects, apart, true);
        assertThat(skel.stdout()).isEqualTo(full.stdout()).isEqualTo("40 180 9 392 293930\n");
        List<List<String>> expected = SkeletonTraceTest.comparable(full.lines());
        List<List<String>> actual = SkeletonTraceTest.comparable(skel.lines());
        assertThat(actual).hasSize(1).hasSameSizeAs(expected);
        List<String> e = expected.getFirst(), a = actual.getFirst();
        for (int i = 0; i < Math.min(e.size(), a.size()); i++) assertThat(a.get(i)).as("line %d", i).isEqualTo(e.get(i));
        assertThat(a).hasSameSizeAs(e);
        assertThat(e.size()).as("event lines").isGreaterThan(2 * 20_000);
        assertThat(outerLoops(skel)).isEqualTo(nests);
    }

    /** The skeleton build's loops that run inner loops whole and start runs of their own, as function/depth, sorted. */
    private static String outerLoops(Printed skel) throws Exception {
        Map<SkeletonTable.Loop, Long> runs = new IdentityHashMap<>();
        try (MtrFile file = MtrFile.open(skel.mtr())) {
            MtrReader.Result result = MtrReader.read(file, ev -> {}, (tid, address, site) -> {}, new MtrReader.LoopRecords() {
                @Override public void entry(int tid, SkeletonTable.Loop loop, long bias, int slot, long value) {
                    if (slot == 0) runs.merge(loop, 1L, Long::sum);
                }
                @Override public void marker(int tid, int marker, long value) {}
                @Override public void exit(int tid, long value) {}
            });
            assertThat(result.problems()).isEmpty();
        }
        TreeMap<Long, String> functions = new TreeMap<>(); // the program's functions by address (non-PIE: link-time)
        for (String line : Gcc.run(List.of("nm", "--defined-only", skel.prog().toString())).split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length == 3 && (f[1].equals("T") || f[1].equals("t"))) functions.put(Long.parseUnsignedLong(f[0], 16), f[2]);
        }
        List<String> outer = new ArrayList<>();
        for (SkeletonTable.Loop loop : runs.keySet())
            if (!loop.nests().isEmpty()) outer.add(functions.floorEntry(loop.entry()).getValue() + "/" + depth(loop));
        return String.join(", ", outer.stream().sorted().toList());
    }

    private static int depth(SkeletonTable.Loop loop) {
        int d = 0;
        for (SkeletonTable.Nest n : loop.nests()) {
            assertThat(n.inner().items()).allMatch(i -> i.computed() || i.nested()); // computed whole
            d = Math.max(d, depth(n.inner()));
        }
        return d + 1;
    }
}
