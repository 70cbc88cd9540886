package org.memtrace.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Leak roots include every running thread's TLS, as LeakSanitizer's do (docs/check.md, "Leaks"): a block whose only
 * pointer is the {@code __thread} variable of a thread still running at exit is no leak, in a {@code cc --check}
 * build and in both modes of {@code run --check}, at -O0 and -O2; its twin, whose thread drops the pointer, is
 * exactly one leak in every mode (leak_tls_thread.c).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunCheckTlsRootsTest {
    Path dir;

    @BeforeAll
    void build(@TempDir Path tmp) throws Exception {
        dir = tmp;
        CheckBuilds.fixture(dir, "leak_tls_thread.c");
        for (String o : List.of("-O0", "-O2")) {
            Process p = new ProcessBuilder("gcc", o, "-g", "-pthread", "-o", "plain" + o, "leak_tls_thread.c").directory(dir.toFile())
                    .redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            assertThat(p.waitFor()).as(out).isZero();
            CheckBuilds.build(dir, false, true, o, "-g", "-pthread", "-o", "checked" + o, "leak_tls_thread.c");
        }
    }

    private CheckBuilds.Run run(String mode, String opt, String... args) throws Exception {
        if (mode.equals("cc")) {
            String[] command = new String[args.length + 1];
            command[0] = "./checked" + opt;
            System.arraycopy(args, 0, command, 1, args.length);
            return CheckBuilds.run(dir, Map.of(), command);
        }
        String[] command = new String[args.length + 1];
        command[0] = "./plain" + opt;
        System.arraycopy(args, 0, command, 1, args.length);
        return CheckBuilds.runCheck(dir, List.of("--mode", mode), Map.of(), command);
    }

    @ParameterizedTest
    @CsvSource({"cc,-O0", "cc,-O2", "rewrite,-O0", "rewrite,-O2", "fault,-O0", "fault,-O2"})
    void aRunningThreadsTlsIsARootAndItsDroppedPointerALeak(String mode, String opt) throws Exception {
        CheckBuilds.Run kept = run(mode, opt);
        assertThat(kept.stderr()).as("the running thread's __thread variable holds the block").isEmpty();
        assertThat(kept.stdout()).isEqualTo("done\n");
        assertThat(kept.status()).isZero();
        CheckBuilds.Run gone = run(mode, opt, "gone");
        assertThat(gone.stdout()).isEqualTo("done\n");
        assertThat(gone.status()).as(gone.stderr()).isEqualTo(23);
        assertThat(gone.stderr().lines().toList()).as(gone.stderr()).hasSize(2).satisfiesExactly(
                l -> assertThat(l).matches("memtrace: leak: <malloc0001@give\\+\\d+> \\(a block of 24 bytes, allocated at "
                        + "leak_tls_thread.c:23\\) unreachable at exit"),
                l -> assertThat(l).isEqualTo("memtrace: leaks: 1 block, 24 bytes, from 1 call"));
    }
}
