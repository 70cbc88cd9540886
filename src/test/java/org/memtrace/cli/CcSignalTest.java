package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TracedRun;

/**
 * A program signal handler with probes of its own interrupts probes (docs/compiled-in.md, "Signal
 * handlers"): a 50 µs timer lands anywhere in a loop whose probe is a group of five sites, so most signals
 * stop a probe between its first store and its cursor's move. Wherever they land, the trace holds every
 * access of the loop once, with its address, in program order (the same as a run of the same rounds without
 * a timer), and the handler's two stores once per handler run. Before probes were rewound, each run of
 * these lost or corrupted a few hundred of the loop's records and some of the handler's.
 */
class CcSignalTest {
    @TempDir Path dir;

    private static final String PROGRAM = """
            #include <signal.h>
            #include <stdio.h>
            #include <stdlib.h>
            #include <string.h>
            #include <sys/time.h>
            long a[256], b[256], c[256], e[256], d[256];
            #ifdef CALL
            __attribute__((noinline)) void hook(long i) { a[i & 255] = -2; }
            #define EXTRA(i) if (a[i] == -1) hook(i)
            #else
            #define EXTRA(i)
            #endif
            volatile long runs, marks;
            void on_alarm(int sig) { (void)sig; marks = runs; runs++; }
            #ifndef EARLY
            static void install(void) {
                struct sigaction sa;
                memset(&sa, 0, sizeof sa);
                sa.sa_handler = on_alarm;
                sigaction(SIGALRM, &sa, NULL);
            }
            #else
            volatile long early;
            void on_usr1(int sig) { (void)sig; early++; }
            static void install(void) { raise(SIGUSR1); }
            #endif
            /* argv[1]: rounds without a timer (the reference run); none: rounds until 400 handler runs */
            int main(int argc, char **argv) {
                long fixed = argc > 1 ? atol(argv[1]) : 0;
                install();
                struct itimerval t = {{0, 50}, {0, 50}}, off;
                memset(&off, 0, sizeof off);
                if (!fixed) setitimer(ITIMER_REAL, &t, NULL);
                long rounds = 0;
                while (fixed ? rounds < fixed : runs < 400 && rounds < 1000000) {
                    for (long i = 0; i < 256; i++) {
                        EXTRA(i);
                        d[i] = a[i] + b[i] + c[i] + e[i] + rounds;
                    }
                    rounds++;
                }
                setitimer(ITIMER_REAL, &off, NULL);
                printf("%ld %ld\\n", rounds, runs);
                return 0;
            }
            """;

    /** An object the runtime does not see: it sets handlers in a preinit_array, before the runtime starts. */
    private static final String PREINIT = """
            #include <signal.h>
            #include <string.h>
            #include <sys/syscall.h>
            #include <unistd.h>
            void on_alarm(int), on_usr1(int);
            /* The kernel's own sigaction, set by a system call no library function sees. */
            struct kernel_sigaction { void (*handler)(int); unsigned long flags; void (*restorer)(void); unsigned long mask; };
            void restore_rt(void);
            __asm__(".text\\nrestore_rt:\\n\\tmovq $15, %rax\\n\\tsyscall\\n");
            static void early(void) {
                struct kernel_sigaction k = {on_alarm, 0x04000000 /* SA_RESTORER */, restore_rt, 0};
                syscall(SYS_rt_sigaction, SIGALRM, &k, NULL, 8);
                struct sigaction sa;
                memset(&sa, 0, sizeof sa);
                sa.sa_handler = on_usr1;
                sigaction(SIGUSR1, &sa, NULL);
            }
            __attribute__((section(".preinit_array"), used)) static void (*early_entry)(void) = early;
            """;

    @Test
    void aGroupProbeOfASharedObjectStoppedMidStoreRecordsTheHandlerFirstAndItsOwnSlotsAfter() throws Exception {
        String asm = build("-fPIC");
        assertThat(asm).as("GOT-form group probes").contains("__memtrace_cursor@gottpoff").contains("leaq 80(%r");
        assertExact(false);
    }

    @Test
    void anExecutablesProbeThatSavesOnlyWhatIsLiveIsRewoundAlike() throws Exception {
        String asm = build("-no-pie", "-DCALL");
        assertThat(asm).as("a probe with a dead register (one saved, the other not)").contains("leaq -144(%rsp), %rsp")
                .as("the group of four sites").contains("leaq 64(%r");
        assertExact(false);
    }

    @Test
    void aLoopThatKeepsItsCursorInARegisterIsRewoundToo() throws Exception {
        String asm = build("-no-pie");
        assertThat(asm).as("a cursor loop: its entry loads the cursor once").contains("movq %fs:__memtrace_cursor@tpoff, %r")
                .contains("leaq 80(%r");
        assertExact(false);
    }

    @Test
    void handlersSetBeforeTheRuntimeStartedAreEnteredThroughItToo() throws Exception {
        Files.writeString(dir.resolve("early.c"), PREINIT);
        Gcc.run(List.of("gcc", "-O2", "-c", "-fno-pie", "-o", dir.resolve("early.o").toString(), dir.resolve("early.c").toString()));
        build("-no-pie", "-DEARLY", dir.resolve("early.o").toString());
        assertExact(true);
    }

    private String build(String... flags) throws Exception {
        Files.writeString(dir.resolve("sig.c"), PROGRAM);
        var command = new ArrayList<>(Cli.command("cc", "--keep-asm", dir.resolve("asm").toString()));
        command.addAll(List.of("-O2", "-g", "-fno-tree-vectorize", "-o", dir.resolve("sig").toString(), dir.resolve("sig.c").toString()));
        command.addAll(List.of(flags));
        assertThat(run(command, null).status()).isZero();
        return Files.readString(dir.resolve("asm").resolve("sig.s"));
    }

    /** The timer run against a run of as many rounds without it. */
    private void assertExact(boolean early) throws Exception {
        TracedRun timed = run(List.of(dir.resolve("sig").toString()), dir.resolve("timed.mtr"));
        assertThat(timed.status()).isZero();
        String[] out = timed.stdout().strip().split(" ");
        long rounds = Long.parseLong(out[0]), runs = Long.parseLong(out[1]);
        assertThat(runs).as("the timer fired while the program ran").isPositive();
        TracedRun reference = run(List.of(dir.resolve("sig").toString(), "" + rounds), dir.resolve("reference.mtr"));
        assertThat(reference.status()).isZero();
        Trace got = trace("timed"), want = trace("reference");
        assertThat(want.arrays).as("the reference run").hasSize((int) rounds * 256 * 5);
        assertThat(got.arrays.equals(want.arrays)).as("the loop's %d accesses once each, in program order, with %d handler runs",
                want.arrays.size(), runs).isTrue();
        assertThat(got.marks).as("the handler's store to marks, once per handler run").isEqualTo(runs);
        assertThat(got.runStores).as("the handler's store to runs, once per handler run").isEqualTo(runs);
        assertThat(got.early).as("the handler set in the preinit, once").isEqualTo(early ? 1 : 0);
    }

    private record Trace(List<String> arrays, long marks, long runStores, long early) {}

    private Trace trace(String name) throws Exception {
        var printed = Cli.run(dir, "print", "-o", name + ".trace", name + ".mtr");
        assertThat(printed.status()).as(printed.stderr()).isZero();
        List<String> arrays = new ArrayList<>();
        long marks = 0, runStores = 0, early = 0;
        for (String l : Files.readAllLines(dir.resolve(name + ".trace"))) {
            if (!(l.startsWith("L$") || l.startsWith("S$"))) continue;
            String field = l.substring(0, l.indexOf(','));
            String variable = field.substring(field.indexOf(':') + 1);
            boolean store = l.charAt(0) == 'S';
            if (variable.length() > 2 && variable.charAt(1) == '[' && "abcde".indexOf(variable.charAt(0)) >= 0) {
                arrays.add(l.charAt(0) + variable);
            } else if (store && variable.equals("marks+0")) {
                marks++;
            } else if (store && variable.equals("runs+0")) {
                runStores++;
            } else if (store && variable.equals("early+0")) {
                early++;
            }
        }
        return new Trace(arrays, marks, runStores, early);
    }

    private TracedRun run(List<String> command, Path mtr) throws Exception {
        return TracedRun.run(dir, command, mtr, 16); // buffers fill inside handlers too
    }
}
