package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.TracedRun;

/**
 * System V's {@code sigset()} (and {@code sighold}/{@code sigrelse}) under a compiled-in runtime: glibc's
 * bodies call its internal {@code __sigaction} and {@code __sigprocmask}, past the runtime's wrappers, so before
 * the runtime wrapped them {@code sigset(SIGSEGV, h)} put the program's handler in the kernel in place of the
 * runtime's, and the next full buffer's guard-page fault entered it (as {@link CcSysvSignalTest}'s
 * {@code __sysv_signal} did). Here the buffers fill many times after the handler is set; the program's SIGSEGV
 * handler never runs, and sigset's semantics stay: a handler that persists (two deliveries), {@code SIG_HOLD}
 * returning the previous handler and holding a raised signal, and re-setting the handler returning
 * {@code SIG_HOLD} and delivering the held one.
 */
class CcSigsetTest {
    @TempDir Path dir;

    private static final String PROGRAM = """
            #define _XOPEN_SOURCE 700 /* sigset, sighold, sigrelse: System V's, deprecated but in glibc */
            #include <signal.h>
            #include <stdio.h>
            #include <stdlib.h>
            long a[1024];
            volatile long segv, usr1;
            static void on_segv(int sig) { (void)sig; segv++; }
            static void on_usr1(int sig) { (void)sig; usr1++; }
            int main(int argc, char **argv) {
                long rounds = argc > 1 ? atol(argv[1]) : 64;
                if (sigset(SIGSEGV, on_segv) == SIG_ERR || sigset(SIGUSR1, on_usr1) == SIG_ERR) return 1;
                if (sighold(SIGSEGV) || sigrelse(SIGSEGV)) return 1;
                for (long r = 0; r < rounds; r++)
                    for (long i = 0; i < 1024; i++) a[i] += i ^ r;
                raise(SIGUSR1);
                raise(SIGUSR1);
                int held = sigset(SIGUSR1, SIG_HOLD) == on_usr1;
                raise(SIGUSR1);
                int waited = usr1 == 2;
                int back = sigset(SIGUSR1, on_usr1) == SIG_HOLD;
                int kept = sigset(SIGSEGV, SIG_DFL) == on_segv;
                long sum = 0;
                for (long i = 0; i < 1024; i++) sum += a[i];
                printf("%ld %ld %ld %d %d %d %d\\n", sum, segv, usr1, held, waited, back, kept);
                return 0;
            }
            """;

    @Test
    void sigsetOfSigsegvLeavesTheRuntimesFullBufferFaultsToIt() throws Exception {
        Files.writeString(dir.resolve("sigset.c"), PROGRAM);
        var cc = Cli.run(dir, "cc", "--keep-asm", dir.resolve("asm").toString(), "-O2", "-g", "-fno-tree-vectorize",
                "-Wno-deprecated-declarations", "-o", dir.resolve("sigset").toString(), dir.resolve("sigset.c").toString());
        assertThat(cc.status()).as(cc.stderr()).isZero();
        assertThat(Files.readString(dir.resolve("asm").resolve("sigset.s"))).as("sigset called by its name")
                .contains("call\tsigset");

        int rounds = 64;
        // 16 KB buffers hold 1024 slots: the loop fills one every half round, 128 times after the handler is set
        TracedRun run = TracedRun.run(dir, List.of(dir.resolve("sigset").toString(), "" + rounds), dir.resolve("sigset.mtr"), 16);
        long sum = 0;
        for (long r = 0; r < rounds; r++) for (long i = 0; i < 1024; i++) sum += i ^ r;
        assertThat(run.status()).as("exit status").isZero();
        assertThat(run.stdout()).isEqualTo(sum + " 0 3 1 1 1 1\n");
    }
}
