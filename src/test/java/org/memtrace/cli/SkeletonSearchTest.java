package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TraceFile;

/**
 * A search by {@code break} on data reached through a loaded pointer falls back to full records (issue 27: {@code --skeleton} never loses to full
 * mode): {@code skel_watch.c}'s watch loop, picosat's at -O2, computes two accesses an iteration but its side
 * exit reads a loaded literal, so a run lasts one or two iterations and its entry value and side-exit marker
 * cost more than full mode's strided records. The skeleton build declines it for reason 15 and gives it the
 * full build's probes, instruction for instruction; its trace holds the full build's events. A search by break on an
 * array it strides through keeps its skeleton loop (skel_shapes.c's brk, skel_continue.c, skel_layout.c: SkeletonTraceTest).
 * (Not asserted: the size, which the chunk cuts decide: main's computed fills move the cuts before the watch loop, and
 * where they fall follows the stack's addresses. Declined, the skeleton trace was 345,056 bytes against full mode's
 * 312,984 in one environment, its first chunk holding 631,664 raw bytes against 274,112; run with {@code env -i}
 * from another directory, 312,272 against 314,776.)
 */
class SkeletonSearchTest {
    @TempDir static Path dir;

    private static final Pattern SEARCH = Pattern.compile("^\\s+1\\s+exit depends on loaded data", Pattern.MULTILINE);
    /** A probe's label numbers differ between the builds (the skeleton has fewer sites before): compared without. */
    private static final Pattern NUMBERED = Pattern.compile("(\\.Lmt_[a-z])\\d+(_\\d+)?");

    /** The summary of the skeleton build's trace. */
    private static String skel;

    @BeforeAll
    static void builds() throws Exception {
        try (InputStream in = SkeletonSearchTest.class.getResourceAsStream("/c/skel_watch.c")) {
            Files.copy(in, dir.resolve("skel_watch.c"));
        }
        build("full");
        skel = build("skel");
    }

    /** Builds into directory {@code build} (the program and its instrumented assembly), runs it, prints its trace; the summary. */
    private static String build(String build) throws Exception {
        Path out = dir.resolve(build);
        Files.createDirectories(out);
        List<String> cc = new ArrayList<>(Cli.command("cc"));
        if (build.equals("skel")) cc.add("--skeleton");
        cc.addAll(List.of("--keep-asm", out.toString(), "-O2", "-no-pie", "-Wl,-Tdata=0x10000000",
                "-Wl,-Trodata-segment=0x8000000", "-o", out.resolve("prog").toString(), dir.resolve("skel_watch.c").toString()));
        Gcc.run(cc);
        Path mtr = out.resolve("prog.mtr");
        // same process id where namespaces allow, no address randomization, environments of one length: the
        // stack's addresses decide where chunks end, so the sizes compare like with like
        List<String> same = SkeletonSizeTest.sameConditions(out.resolve("prog"));
        Gcc.run(same != null ? same : List.of("setarch", "x86_64", "-R", out.resolve("prog").toString()),
                Map.of("MEMTRACE_OUT", mtr.toString()));
        var printed = Cli.run(dir, "print", "--addresses", "both", "-o", out.resolve("prog.trace").toString(), mtr.toString());
        assertThat(printed.status()).as(printed.stderr()).isZero();
        TraceFile.read(out.resolve("prog.trace"));
        return printed.stderr();
    }

    /** The instrumented text of {@code function}, label numbers left out, without instruction labels on a line of their own. */
    private static List<String> function(String build, String function) throws Exception {
        List<String> body = new ArrayList<>();
        boolean in = false;
        for (String l : Files.readAllLines(dir.resolve(build).resolve("skel_watch.s"))) {
            if (l.equals(function + ":")) in = true;
            if (!in) continue;
            String t = NUMBERED.matcher(l).replaceAll("$1");
            if (!t.equals(".Lmt_i:")) body.add(t);
            if (l.strip().startsWith(".size\t" + function + ",")) break;
        }
        assertThat(body).as("%s in the %s build", function, build).isNotEmpty();
        return body;
    }

    @Test
    void aSearchByBreakIsDeclinedAndKeepsTheFullBuildsProbes() throws Exception {
        assertThat(SEARCH.matcher(skel).find()).as(skel).isTrue();
        assertThat(function("skel", "watch")).isEqualTo(function("full", "watch"));
        List<List<String>> full = SkeletonTraceTest.comparable(Files.readAllLines(dir.resolve("full/prog.trace")));
        List<List<String>> skeleton = SkeletonTraceTest.comparable(Files.readAllLines(dir.resolve("skel/prog.trace")));
        assertThat(skeleton).isEqualTo(full);
    }
}
