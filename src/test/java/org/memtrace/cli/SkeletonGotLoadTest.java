package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TraceFile;

/**
 * A skeleton build records {@code @GOTPCREL} loads as a full build does (flag 0x40, kept where the linked
 * bytes still load) and leaves a loop that holds one to full mode: a PIE loading libc's qsort slot in a loop
 * (kept), its own function's slot in another (relaxed by the link into a lea) and printf's outside any
 * loop, and a -fPIC library loading the slot of another library's variable in a loop, replay exactly as
 * the full build's trace, raw and symbolic (compared as SkeletonTraceTest does).
 */
class SkeletonGotLoadTest {
    private static final String OPT = "-O1";
    // without these gcc hoists the loop-invariant slot loads out of the loops
    private static final List<String> KEEP_IN_LOOP = List.of("-fno-tree-loop-im", "-fno-move-loop-invariants");

    @TempDir Path dir;

    @Test
    void gotLoadsOfASkeletonBuildReplayAsTheFullBuildsTrace() throws Exception {
        for (String c : List.of("skel_got_main.c", "skel_got_lib.c", "got_other.c", "got_var.c")) copy(c);
        Gcc.run(List.of("gcc", "-O2", "-shared", "-fPIC", "-o", path("libgotvar.so"), path("got_var.c")));
        List<String> full = traced("full", false);
        List<String> skel = traced("skel", true);

        List<List<String>> expected = SkeletonTraceTest.comparable(full);
        List<List<String>> actual = SkeletonTraceTest.comparable(skel);
        assertThat(actual).hasSameSizeAs(expected);
        for (int t = 0; t < expected.size(); t++) {
            List<String> e = expected.get(t), a = actual.get(t);
            for (int i = 0; i < Math.min(e.size(), a.size()); i++)
                assertThat(a.get(i)).as("thread group %d, line %d", t, i).isEqualTo(e.get(i));
            assertThat(a).hasSameSizeAs(e);
        }

        // 50 iterations: qsort's slot in every one, got_local's relaxed away, printf's once in main; the
        // library reads its slot of shared_counter and then shared_counter itself
        Map<String, Integer> loads = moduleLoads(skel);
        assertThat(loads).containsEntry("fill_kept main", 50).containsEntry("main main", 1)
                .containsEntry("bump libgotmt.so", 50).containsEntry("bump libgotvar.so", 50)
                .doesNotContainKey("fill_relaxed main");
    }

    /** The printed trace (raw and symbolic lines) of one build of the library and program, run once. */
    private List<String> traced(String variant, boolean skeleton) throws Exception {
        Path out = dir.resolve(variant);
        Files.createDirectories(out);
        String rpath = "-Wl,-rpath," + out + ":" + dir;
        build(skeleton, "-fPIC", "-shared", "-o", out.resolve("libgotmt.so").toString(), path("skel_got_lib.c"),
                "-L" + dir, "-lgotvar", rpath);
        // -fPIC: every probe of both builds finds the cursor through the GOT, whose slots are then the same
        build(skeleton, "-fPIC", "-o", out.resolve("main").toString(), path("skel_got_main.c"), path("got_other.c"),
                "-L" + out, "-lgotmt", "-L" + dir, "-lgotvar", rpath);
        Path mtr = out.resolve("prog.mtr");
        Path prog = out.resolve("main");
        List<String> same = SkeletonSizeTest.sameConditions(prog);
        Gcc.run(same != null ? same : List.of("setarch", "x86_64", "-R", prog.toString()),
                Map.of("MEMTRACE_OUT", mtr.toString()));
        Path text = out.resolve("prog.trace");
        Cli.Result printed = Cli.run(dir, "print", "--addresses", "both", "-o", text.toString(), mtr.toString());
        assertThat(printed.status()).as(printed.stderr()).isZero();
        if (skeleton) {
            assertThat(printed.stderr()).as("skeleton summary")
                    .contains("access the link may take away in loop (GOT load, -fno-plt call, TLS resolver call)")
                    .containsPattern("computed\\s+100\\n"); // scale's loads and modifies
        }
        return Files.readAllLines(text);
    }

    /** Loads off the stack and heap, by function and region ("fill_kept main": GOT slots of the program). */
    private static Map<String, Integer> moduleLoads(List<String> lines) {
        Map<String, Integer> counts = new TreeMap<>();
        for (TraceFile.Line l : TraceFile.parse(lines).lines()) {
            if (l.raw() || l.type() != 'L' || l.field(1).startsWith("[")) continue;
            String where = l.field(2);
            counts.merge(where.substring(0, where.indexOf('+')) + " " + l.field(1), 1, Integer::sum);
        }
        return counts;
    }

    private void build(boolean skeleton, String... args) throws Exception {
        List<String> cc = new ArrayList<>(Cli.command("cc"));
        if (skeleton) cc.add("--skeleton");
        cc.add(OPT);
        cc.addAll(KEEP_IN_LOOP);
        cc.addAll(List.of(args));
        Gcc.run(cc);
    }

    private String path(String name) {
        return dir.resolve(name).toString();
    }

    private void copy(String source) throws IOException {
        try (InputStream in = SkeletonGotLoadTest.class.getResourceAsStream("/c/" + source)) {
            if (in == null) throw new IOException("no fixture " + source);
            Files.copy(in, dir.resolve(source));
        }
    }
}
