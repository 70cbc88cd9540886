package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;

/**
 * The build-id ties a skeleton trace to the skeleton it is replayed from (issue 10): the reader refuses, in
 * one line and with a non-zero status, a trace whose program on disk is another build or has no build-id,
 * and {@code memtrace cc --skeleton} links with a build-id even when told not to.
 */
class SkeletonChecksumTest {
    @TempDir static Path dir;

    @BeforeAll
    static void fixture() throws Exception {
        try (InputStream in = SkeletonChecksumTest.class.getResourceAsStream("/c/skel_threads.c")) {
            Files.copy(in, dir.resolve("skel_threads.c"));
        }
    }

    private static Path build(String name, String... extra) throws Exception {
        Path exe = dir.resolve(name);
        List<String> cc = new ArrayList<>(Cli.command("cc", "--skeleton", "-O2", "-pthread"));
        cc.addAll(List.of(extra));
        cc.addAll(List.of("-o", exe.toString(), dir.resolve("skel_threads.c").toString()));
        Gcc.run(cc);
        return exe;
    }

    private static Path record(Path exe) throws Exception {
        Path mtr = dir.resolve(exe.getFileName() + ".mtr");
        Gcc.run(List.of(exe.toString()), Map.of("MEMTRACE_OUT", mtr.toString()));
        return mtr;
    }

    @Test
    void aTraceOfTheSameBuildReplaysEvenWhenTheBuildAskedForNoBuildId() throws Exception {
        Path mtr = record(build("plain", "-Wl,--build-id=none"));
        var printed = Cli.run(dir, "print", "-o", dir.resolve("plain.trace").toString(), mtr.toString());
        assertThat(printed.status()).as(printed.stderr()).isZero();
        assertThat(printed.stderr()).containsPattern("computed\\s+[1-9]");
    }

    @Test
    void aTraceWhoseProgramWasRebuiltDifferentlyIsRefusedInOneLine() throws Exception {
        Path exe = build("rebuilt");
        Path mtr = record(exe);
        build("rebuilt", "-O1"); // same path, other optimization: other code, other skeleton
        var printed = Cli.run(dir, "print", "-o", dir.resolve("rebuilt.trace").toString(), mtr.toString());
        assertThat(printed.status()).isNotZero();
        assertThat(printed.stderr().lines()).hasSize(1).first().asString()
                .startsWith("memtrace: ").contains(exe + " is not the build the trace was recorded from");
    }

    @Test
    void aProgramWithoutBuildIdIsRefusedInOneLine() throws Exception {
        Path exe = build("stripped");
        Path mtr = record(exe);
        Gcc.run(List.of("objcopy", "--remove-section", ".note.gnu.build-id", exe.toString()));
        var printed = Cli.run(dir, "print", "-o", dir.resolve("stripped.trace").toString(), mtr.toString());
        assertThat(printed.status()).isNotZero();
        assertThat(printed.stderr().lines()).hasSize(1).first().asString()
                .startsWith("memtrace: ").contains("has no build-id");
    }
}
