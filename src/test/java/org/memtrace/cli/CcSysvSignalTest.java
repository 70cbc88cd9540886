package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.TracedRun;

/**
 * A program compiled with {@code _POSIX_C_SOURCE} and no {@code _DEFAULT_SOURCE} calls {@code signal()}
 * as glibc's {@code __sysv_signal} (its {@code <signal.h>} redirects the name). zstd 1.5.4's programs/ do
 * so for their SIGSEGV backtrace handler: before the runtime wrapped that name, the call replaced the
 * runtime's SIGSEGV handler in the kernel, the next full buffer's guard-page fault entered zstd's handler,
 * and zstd died of SIGSEGV at its first probe after that (in ZSTD_compressBlock_doubleFast). Here the
 * buffers fill many times after the handler is set; the trace holds every access, the program's SIGSEGV
 * handler never runs, and the one-shot SysV semantics stay (SIGUSR1 is back at SIG_DFL after one delivery).
 */
class CcSysvSignalTest {
    @TempDir Path dir;

    private static final String PROGRAM = """
            #define _POSIX_C_SOURCE 200809L /* no _DEFAULT_SOURCE: <signal.h> binds signal() to __sysv_signal */
            #include <signal.h>
            #include <stdio.h>
            #include <stdlib.h>
            long a[1024];
            volatile long segv, usr1;
            static void on_segv(int sig) { (void)sig; segv++; }
            static void on_usr1(int sig) { (void)sig; usr1++; }
            int main(int argc, char **argv) {
                long rounds = argc > 1 ? atol(argv[1]) : 64;
                if (signal(SIGSEGV, on_segv) == SIG_ERR || signal(SIGUSR1, on_usr1) == SIG_ERR) return 1;
                for (long r = 0; r < rounds; r++)
                    for (long i = 0; i < 1024; i++) a[i] += i ^ r;
                raise(SIGUSR1);
                /* one-shot: the delivery reset SIGUSR1 to SIG_DFL; SIGSEGV still holds on_segv */
                int reset = signal(SIGUSR1, SIG_IGN) == SIG_DFL, kept = signal(SIGSEGV, SIG_DFL) == on_segv;
                long sum = 0;
                for (long i = 0; i < 1024; i++) sum += a[i];
                printf("%ld %ld %ld %d %d\\n", sum, segv, usr1, reset, kept);
                return 0;
            }
            """;

    @Test
    void aSysvSignalHandlerForSigsegvLeavesTheRuntimesFullBufferFaultsToIt() throws Exception {
        Files.writeString(dir.resolve("sysv.c"), PROGRAM);
        var cc = Cli.run(dir, "cc", "--keep-asm", dir.resolve("asm").toString(), "-O2", "-g", "-fno-tree-vectorize",
                "-o", dir.resolve("sysv").toString(), dir.resolve("sysv.c").toString());
        assertThat(cc.status()).as(cc.stderr()).isZero();
        assertThat(Files.readString(dir.resolve("asm").resolve("sysv.s"))).as("signal() called by its SysV name")
                .contains("call\t__sysv_signal");

        int rounds = 64;
        // 16 KB buffers hold 1024 slots: the loop fills one every half round, 128 times after the handler is set
        TracedRun run = TracedRun.run(dir, List.of(dir.resolve("sysv").toString(), "" + rounds), dir.resolve("sysv.mtr"), 16);
        long sum = 0;
        for (long r = 0; r < rounds; r++) for (long i = 0; i < 1024; i++) sum += i ^ r;
        assertThat(run.status()).as("exit status").isZero();
        assertThat(run.stdout()).isEqualTo(sum + " 0 1 1 1\n");

        var printed = Cli.run(dir, "print", "-o", "sysv.trace", "sysv.mtr");
        assertThat(printed.status()).as(printed.stderr()).isZero();
        Map<String, Integer> counts = new TreeMap<>();
        List<String> order = new ArrayList<>();
        for (String l : Files.readAllLines(dir.resolve("sysv.trace"))) {
            if (!(l.startsWith("L$") || l.startsWith("S$"))) continue;
            String field = l.substring(0, l.indexOf(','));
            String variable = field.substring(field.indexOf(':') + 1);
            String key = l.charAt(0) + " " + (variable.startsWith("a[") ? "a" : variable);
            if (!key.endsWith(" a") && !key.endsWith(" usr1+0") && !key.endsWith(" segv+0")) continue;
            counts.merge(key, 1, Integer::sum);
            if (!key.endsWith(" a")) order.add(key);
        }
        assertThat(counts).isEqualTo(Map.of("L a", rounds * 1024 + 1024, "S a", rounds * 1024,
                "L usr1+0", 2, "S usr1+0", 1, "L segv+0", 1));
        assertThat(order).as("on_usr1's increment, then main's reads for printf")
                .containsExactly("L usr1+0", "S usr1+0", "L usr1+0", "L segv+0");
    }
}
