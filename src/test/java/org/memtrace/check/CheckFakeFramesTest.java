package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Fake frames (agent/check/check_fakestack.c, docs/check.md "Stack use after return"): a class's frames are handed
 * out round robin over a window (256 frames of 128 bytes for fakeframes.c's locals), so a use after return is
 * named after its own function for the window's next 255 calls of the class, and still reported as a use after
 * return later while the frame is not in use again; a recursion deeper than the window gets fake frames past
 * it; the frames a run reuses are the window's and no more. At -O0 and -O2; every twin silent.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CheckFakeFramesTest {
    private Path dir, source;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        source = CheckBuilds.fixture(dir, "fakeframes.c");
        CheckBuilds.build(dir, false, true, "-O0", "-g", "-o", "ff-O0", "fakeframes.c");
        CheckBuilds.build(dir, false, true, "-O2", "-g", "-o", "ff-O2", "fakeframes.c");
    }

    private String report(String function, String key, String use) throws Exception {
        return CheckBuilds.reportPattern(source, "memtrace: stack use after return: <stack:local@" + function + ">+N (a variable of 32 bytes, "
                + "declared at line {" + key + "} of " + function + ") read 4 bytes, at fakeframes.c:{" + use + "} (main+N), thread ") + "\\d+";
    }

    private CheckBuilds.Run run(String level, String... args) throws Exception {
        String[] command = new String[args.length + 1];
        command[0] = "./ff-" + level;
        System.arraycopy(args, 0, command, 1, args.length);
        return CheckBuilds.run(dir, Map.of(), command);
    }

    @ParameterizedTest
    @ValueSource(strings = {"O0", "O2"})
    void aUseAfterReturnIsNamedForTheWindowsNext255CallsAndCaughtLater(String level) throws Exception {
        for (String calls : new String[] {"0", "1", "255"}) {
            CheckBuilds.Run r = run(level, "late", calls, "bad");
            assertThat(r.status()).as(calls + ": " + r.stderr()).isEqualTo(1);
            assertThat(r.stderr().lines().findFirst().orElse("")).as(calls).matches(report("keep_local", "KEEP", "LATE"));
        }
        // the frame was handed out again (to other_local, which returned too): still a use after return
        CheckBuilds.Run late = run(level, "late", "3000", "bad");
        assertThat(late.status()).as(late.stderr()).isEqualTo(1);
        assertThat(late.stderr().lines().findFirst().orElse("")).matches(report("other_local", "OTHER", "LATE"));
        CheckBuilds.Run good = run(level, "late", "255", "good");
        assertThat(good.stderr()).isEmpty();
        assertThat(good.stdout()).isEqualTo("done\n");
        assertThat(good.status()).isZero();
    }

    @ParameterizedTest
    @ValueSource(strings = {"O0", "O2"})
    void aRecursionDeeperThanTheWindowKeepsFakeFrames(String level) throws Exception {
        CheckBuilds.Run bad = run(level, "deep", "1000", "bad");
        assertThat(bad.status()).as(bad.stderr()).isEqualTo(1);
        String function = level.equals("O2") ? "keep_deep.constprop.0" : "keep_deep";
        assertThat(bad.stderr().lines().findFirst().orElse("")).matches(report(function, "DEEP_LOCAL", "DEEP"));
        CheckBuilds.Run good = run(level, "deep", "1000", "good");
        assertThat(good.stderr()).isEmpty();
        assertThat(good.status()).isZero();
    }

    @ParameterizedTest
    @ValueSource(strings = {"O0", "O2"})
    void aReturnedFrameIsNotHandedOutBeforeTheWindowsOthersAndNoMoreAreUsed(String level) throws Exception {
        CheckBuilds.Run r = run(level, "frames", "10000", "good");
        assertThat(r.stderr()).isEmpty();
        assertThat(r.stdout()).isEqualTo("256 frames, returned frame kept\ndone\n");
        CheckBuilds.Run off = CheckBuilds.run(dir, Map.of("MEMTRACE_CHECK", "noreturn"), "./ff-" + level, "late", "1", "bad");
        assertThat(off.stderr()).isEmpty();
        assertThat(off.status()).isZero();
    }
}
