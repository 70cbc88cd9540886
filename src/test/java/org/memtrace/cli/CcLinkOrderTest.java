package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;

/**
 * memtrace cc links the user's libraries in gcc's order, with its runtime first (docs/compiled-in.md, "Linking"):
 * a C++ program built with {@code memtrace cc … -lstdc++} traces as one built with {@code memtrace c++} (the
 * runtime's operator new, not libstdc++'s, so blocks are named by their caller), and a C program linked with
 * {@code -lm -lc} after its source records its allocations (libc's malloc no longer comes first).
 */
class CcLinkOrderTest {
    @TempDir static Path dir;

    @BeforeAll
    static void sources() throws Exception {
        try (InputStream in = CcLinkOrderTest.class.getResourceAsStream("/cpp/link_new.cpp")) {
            Files.copy(in, dir.resolve("link_new.cpp"));
        }
        try (InputStream in = CcLinkOrderTest.class.getResourceAsStream("/c/link_libm.c")) {
            Files.copy(in, dir.resolve("link_libm.c"));
        }
    }

    private static String path(String name) {
        return dir.resolve(name).toString();
    }

    private static void ok(Cli.Result r) {
        assertThat(r.status()).as(r.stderr()).isZero();
    }

    /** The libraries a program needs, in order (readelf -d). */
    private static List<String> needed(String program) throws Exception {
        List<String> libs = new ArrayList<>();
        for (String l : Gcc.run(List.of("readelf", "-d", path(program))).lines().toList())
            if (l.contains("(NEEDED)")) libs.add(l.substring(l.indexOf('[') + 1, l.indexOf(']')));
        return libs;
    }

    /** The trace's allocation and free lines, thread ids cut (a stack reference after them kept). */
    private static List<String> heap(String program) throws Exception {
        ok(Cli.run(dir, "run", "-q", "-o", path(program + ".trace"), "--", path(program)));
        return Files.readAllLines(dir.resolve(program + ".trace")).stream().filter(l -> l.startsWith("M$") || l.startsWith("F$"))
                .map(l -> l.replaceAll(",\\d+(,s\\d+)?$", ",TID$1")).toList();
    }

    @Test
    void ccWithLibstdcxxTracesAsCxxDoes() throws Exception {
        ok(Cli.run(dir, "cc", "-O0", "-o", path("new-cc"), path("link_new.cpp"), "-lstdc++"));
        ok(Cli.run(dir, "c++", "-O0", "-o", path("new-cxx"), path("link_new.cpp")));
        Gcc.run(List.of("gcc", "-O0", "-o", path("new-gcc"), path("link_new.cpp"), "-lstdc++"));
        assertThat(needed("new-cc")).containsExactly("libmemtrace-rt.so", "libstdc++.so.6", "libc.so.6");
        assertThat(needed("new-gcc")).containsExactly("libstdc++.so.6", "libc.so.6");
        List<String> cc = heap("new-cc");
        // libstdc++'s emergency pool first: the runtime (linked -z initfirst) records from before libstdc++'s constructor
        assertThat(cc).hasSize(4).first().asString().matches("M\\$0:<malloc0001@libstdc\\+\\+\\.so\\.6\\+0x[0-9a-f]+>,\\d+,TID(,s\\d+)?");
        assertThat(cc.get(1)).matches("M\\$\\d+:<malloc0002@main\\+\\d+>,16,TID");
        assertThat(cc).isEqualTo(heap("new-cxx"));
    }

    @Test
    void libmAndLibcAfterTheSourceKeepGccsOrderAndTheRuntimeSeesMalloc() throws Exception {
        ok(Cli.run(dir, "cc", "-O0", "-o", path("m-cc"), path("link_libm.c"), "-lm", "-lc"));
        Gcc.run(List.of("gcc", "-O0", "-o", path("m-gcc"), path("link_libm.c"), "-lm", "-lc"));
        assertThat(needed("m-cc")).containsExactly("libmemtrace-rt.so", "libm.so.6", "libc.so.6");
        assertThat(needed("m-gcc")).containsExactly("libm.so.6", "libc.so.6");
        List<String> lines = heap("m-cc");
        assertThat(lines).hasSize(3);
        assertThat(lines.get(0)).matches("M\\$\\d+:<malloc0001@main\\+\\d+>,8,TID");
        assertThat(lines.get(2)).matches("F\\$\\d+:<freed:0001@main\\+\\d+>,TID");
        assertThat(Gcc.run(List.of(path("m-cc")))).isEqualTo("1.414\n");
    }

    @Test
    void libmBeforeTheSourceLinksExactlyWhenGccDoes() throws Exception {
        // gcc links --as-needed by default where it is so configured (Debian, Ubuntu): a library before the
        // objects that need it is then dropped and sqrt is undefined; memtrace cc must answer as gcc does
        Process gcc = new ProcessBuilder("gcc", "-O0", "-lm", "-o", path("m-early-gcc"), path("link_libm.c")).redirectErrorStream(true).start();
        String gccOutput = new String(gcc.getInputStream().readAllBytes());
        int gccStatus = gcc.waitFor();
        Cli.Result r = Cli.run(dir, "cc", "-O0", "-lm", "-o", path("m-early"), path("link_libm.c"));
        assertThat(r.status()).as(r.stderr()).isEqualTo(gccStatus);
        if (gccStatus != 0) assertThat(r.stderr()).contains("undefined reference to `sqrt'").as(gccOutput);
        else assertThat(needed("m-early")).containsExactly("libmemtrace-rt.so", "libm.so.6", "libc.so.6");
    }
}
