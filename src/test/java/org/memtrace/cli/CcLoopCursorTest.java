package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TracedRun;

/**
 * A loop that keeps its probes' cursor in a register (docs/compiled-in.md, "A loop's cursor"): no save and
 * no cursor load inside it, and with buffers so small that they fill hundreds of times inside the loop, the
 * real runtime still records every access in order. The buffer and signal cases run also with the probes
 * armed for access stacks (MEMTRACE_ACCESS_STACKS=1, agent/runtime/rt_ccarm.c): the loop probe's first
 * executions trap, and the handler writes the stack at the loop's register and moves it past the record.
 */
class CcLoopCursorTest {
    @TempDir Path dir;

    private static final String PROGRAM = """
            #include <stdio.h>
            #include <stdlib.h>
            static long a[4096];
            int main(int argc, char **argv) {
                long rounds = argc > 1 ? atol(argv[1]) : 1;
                for (long r = 0; r < rounds; r++)
                    for (long i = 0; i < 4096; i++) a[i] += r;
                long s = 0;
                for (long i = 0; i < 4096; i++) s += a[i];
                printf("%ld\\n", s);
                return 0;
            }
            """;

    private static final int ROUNDS = 100;

    @ParameterizedTest(name = "armed {0}")
    @ValueSource(booleans = {false, true})
    void aLoopsProbesStoreOnlyRecordsAndTheCursorAndLoseNothingWhenBuffersFill(boolean armed) throws Exception {
        Files.writeString(dir.resolve("loops.c"), PROGRAM);
        List<String> flags = List.of("-O2", "-g", "-fno-tree-vectorize", "-no-pie");
        var build = new ArrayList<>(Cli.command("cc", "--keep-asm", dir.resolve("asm").toString()));
        build.addAll(flags);
        build.addAll(List.of("-o", dir.resolve("loops").toString(), dir.resolve("loops.c").toString()));
        assertThat(run(build, null).status()).isZero();
        var plain = new ArrayList<>(List.of("gcc", "-o", dir.resolve("plain").toString()));
        plain.addAll(flags);
        plain.add(dir.resolve("loops.c").toString());
        Gcc.run(plain);

        String asm = Files.readString(dir.resolve("asm").resolve("loops.s"));
        List<String> bodies = loopBodies(asm);
        assertThat(bodies).as("both loops over a[] keep their cursor in a register").hasSize(2);
        for (String body : bodies) {
            assertThat(body).as("inside the loop: the records and the cursor's register only")
                    .contains("movq %").doesNotContain("__memtrace_cursor").doesNotContain("pushq").doesNotContain("popq");
        }

        String expected = run(List.of(dir.resolve("plain").toString(), "" + ROUNDS), null).stdout();
        Path mtr = dir.resolve("loops.mtr");
        TracedRun traced = run(List.of(dir.resolve("loops").toString(), "" + ROUNDS), mtr, armed);
        assertThat(traced.stdout()).as("the program computes what the plain build does").isEqualTo(expected);
        var printed = Cli.run(dir, "print", "-o", "loops.trace", mtr.toString());
        assertThat(printed.status()).as(printed.stderr()).isZero();
        List<String> names = new ArrayList<>();
        for (String l : Files.readAllLines(dir.resolve("loops.trace"))) {
            if (l.startsWith("L$") || l.startsWith("S$")) {
                String[] f = l.split(",");
                String name = f[0].substring(f[0].indexOf(':') + 1);
                if (name.startsWith("a[") && name.endsWith("]+0")) { // -g: the element, named by its type
                    names.add(l.charAt(0) + "" + 8 * Integer.parseInt(name.substring(2, name.indexOf(']'))));
                }
            }
        }
        var want = new ArrayList<String>();
        for (int r = 0; r < ROUNDS; r++) {
            for (int i = 0; i < 4096; i++) {
                want.add("L" + 8 * i);
                want.add("S" + 8 * i);
            }
        }
        for (int i = 0; i < 4096; i++) want.add("L" + 8 * i);
        assertThat(names).as("every access to a[], in program order, across %d full buffers", ROUNDS * 4096 * 2 / 512)
                .isEqualTo(want);
    }

    @Test
    void aCrashInsideTheLoopKeepsTheRecordsOnlyTheRegisterHeld() throws Exception {
        Files.writeString(dir.resolve("crash.c"), """
                #include <stdlib.h>
                #include <sys/mman.h>
                #include <unistd.h>
                int main(int argc, char **argv) {
                    long page = sysconf(_SC_PAGESIZE);
                    long *p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                    mprotect((char *) p + page, page, PROT_NONE);
                    long n = atol(argv[1]);
                    for (long i = 0; i < n; i++) p[i] = i;
                    return 0;
                }
                """);
        var build = new ArrayList<>(Cli.command("cc", "--keep-asm", dir.resolve("asm").toString()));
        build.addAll(List.of("-O2", "-fno-tree-vectorize", "-no-pie", "-o", dir.resolve("crash").toString(),
                dir.resolve("crash.c").toString()));
        assertThat(run(build, null).status()).isZero();
        assertThat(loopBodies(Files.readString(dir.resolve("asm").resolve("crash.s")))).hasSize(1);
        Path mtr = dir.resolve("crash.mtr");
        ProcessBuilder pb = new ProcessBuilder(dir.resolve("crash").toString(), "100000").directory(dir.toFile());
        pb.environment().put("MEMTRACE_OUT", mtr.toString());
        Process p = pb.start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("killed by SIGSEGV").isEqualTo(128 + 11);
        var printed = Cli.run(dir, "print", "-o", "crash.trace", mtr.toString());
        assertThat(printed.status()).as(printed.stderr()).isZero();
        List<String> stores = new ArrayList<>();
        for (String l : Files.readAllLines(dir.resolve("crash.trace"))) {
            if (l.startsWith("S$") && l.contains("<memmap")) stores.add(l.substring(l.indexOf('>') + 1, l.indexOf(',')));
        }
        long page = Long.parseLong(run(List.of("getconf", "PAGESIZE"), null).stdout().strip());
        var want = new ArrayList<String>();
        for (long off = 0; off <= page; off += 8) want.add("+" + off);
        assertThat(stores).as("every store up to the faulting one, though the loop never wrote its cursor back")
                .isEqualTo(want);
    }

    /**
     * A signal handler with probes of its own runs while the loop holds the cursor in a register: the
     * runtime hands the handler the loop's cursor and the loop the handler's, so neither overwrites the
     * other's records, also when buffers fill (8 KiB buffers here), and the program does not crash. A 50 µs
     * timer lands anywhere, also inside a probe after its first store, which the runtime rewinds so that it
     * writes its slots after the handler's (docs/compiled-in.md, "Signal handlers"). Wherever it lands, the
     * trace holds every access of a[] once, in program order, and the handler's store once per run. (Before
     * handlers were entered through program_handler, each handler run overwrote three of the loop's
     * records; before probes were rewound, a signal in mid-probe cost a slot of the loop and one of the
     * handler's.)
     */
    @ParameterizedTest(name = "armed {0}")
    @ValueSource(booleans = {false, true})
    void aSignalHandlerInsideTheLoopAddsItsRecordsAndLosesNoneOfTheLoops(boolean armed) throws Exception {
        Files.writeString(dir.resolve("timer.c"), """
                #include <signal.h>
                #include <stdio.h>
                #include <string.h>
                #include <sys/time.h>
                static long a[512];
                static volatile long ticks, marks;
                static void on_alarm(int sig) { (void)sig; marks = ticks; ticks++; }
                int main(void) {
                    struct sigaction sa;
                    memset(&sa, 0, sizeof sa);
                    sa.sa_handler = on_alarm;
                    sigaction(SIGALRM, &sa, NULL);
                    struct itimerval t = {{0, 50}, {0, 50}}, off;
                    memset(&off, 0, sizeof off);
                    setitimer(ITIMER_REAL, &t, NULL);
                    long rounds = 0;
                    while (ticks < 400 && rounds < 1000000) {
                        for (long i = 0; i < 512; i++) a[i] += rounds;
                        rounds++;
                    }
                    setitimer(ITIMER_REAL, &off, NULL);
                    printf("%ld %ld\\n", rounds, ticks);
                    return 0;
                }
                """);
        var build = new ArrayList<>(Cli.command("cc", "--keep-asm", dir.resolve("asm").toString()));
        build.addAll(List.of("-O2", "-g", "-fno-tree-vectorize", "-no-pie", "-o", dir.resolve("timer").toString(),
                dir.resolve("timer.c").toString()));
        assertThat(run(build, null).status()).isZero();
        assertThat(loopBodies(Files.readString(dir.resolve("asm").resolve("timer.s")))).hasSize(1);
        Path mtr = dir.resolve("timer.mtr");
        TracedRun traced = run(List.of(dir.resolve("timer").toString()), mtr, armed);
        assertThat(traced.status()).isZero();
        String[] out = traced.stdout().strip().split(" ");
        long rounds = Long.parseLong(out[0]), ticks = Long.parseLong(out[1]);
        assertThat(ticks).as("the timer fired while the program ran").isPositive();
        var printed = Cli.run(dir, "print", "-o", "timer.trace", mtr.toString());
        assertThat(printed.status()).as(printed.stderr()).isZero();
        List<String> elements = new ArrayList<>();
        long markStores = 0;
        for (String l : Files.readAllLines(dir.resolve("timer.trace"))) {
            if (!(l.startsWith("L$") || l.startsWith("S$"))) continue;
            String name = l.split(",")[0].substring(l.indexOf(':') + 1);
            if (name.startsWith("a[") && name.endsWith("]+0")) elements.add(l.charAt(0) + "" + 8 * Integer.parseInt(name.substring(2, name.indexOf(']'))));
            else if (name.equals("marks+0") && l.charAt(0) == 'S') markStores++;
        }
        var want = new ArrayList<String>();
        for (long r = 0; r < rounds; r++) {
            for (int i = 0; i < 512; i++) { // a[i] += r: a load, then a store
                want.add("L" + 8 * i);
                want.add("S" + 8 * i);
            }
        }
        assertThat(elements.equals(want)).as("the %d accesses of a[] once each, in program order, %d handler runs",
                want.size(), ticks).isTrue();
        assertThat(markStores).as("the handler's store to marks, once per handler run").isEqualTo(ticks);
    }

    /** The text between a loop's label and its back edge, for the loops written with their entry code. */
    private static List<String> loopBodies(String asm) {
        var bodies = new ArrayList<String>();
        Matcher m = Pattern.compile("movq %fs:__memtrace_cursor@tpoff, %(\\w+)\\n(?:\\t\\.p2align[^\\n]*\\n)*(\\.L\\d+):\\n")
                .matcher(asm);
        while (m.find()) {
            Matcher back = Pattern.compile("\\n\\tj\\w+\\t" + Pattern.quote(m.group(2)) + "\\n").matcher(asm);
            if (back.find(m.end())) {
                bodies.add(asm.substring(m.end(), back.start() + 1));
            }
        }
        return bodies;
    }

    private TracedRun run(List<String> command, Path mtr) throws Exception {
        return run(command, mtr, false);
    }

    private TracedRun run(List<String> command, Path mtr, boolean armed) throws Exception {
        return TracedRun.run(dir, command, mtr, 8, armed ? java.util.Map.of("MEMTRACE_ACCESS_STACKS", "1") : java.util.Map.of());
    }
}
