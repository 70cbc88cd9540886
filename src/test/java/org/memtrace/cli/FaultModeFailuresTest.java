package org.memtrace.cli;

import static org.assertj.core.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TraceFile;
import org.memtrace.testutil.TraceFile.Line;

/** The failures of issue 8, item 3, each reproduced with the real agent: the program must behave as it does untraced. */
class FaultModeFailuresTest {
    @TempDir static Path dir;

    @BeforeAll
    static void build() throws Exception {
        for (String p : List.of("syscall_buffers", "altstack", "ends", "forever", "as_limit", "as_limit_outside"))
            Gcc.compile(dir, p + ".c", p, "-g", "-no-pie");
        Gcc.compile(dir, "odd_names.c", "d,1", "-g", "-no-pie");
        Gcc.compile(dir, "raw_clone3.c", "raw_clone3", "-g", "-no-pie", "-pthread");
        Gcc.compile(dir, "io_uring_read.c", "io_uring_read", "-g", "-no-pie");
        Files.writeString(dir.resolve("io_uring_read.txt"), "ring text");
    }

    static Cli.Result memtrace(String trace, String... args) throws Exception {
        String[] all = new String[args.length + 7];
        System.arraycopy(new String[] {"run", "--mode", "fault", "--addresses", "both", "-o", dir.resolve(trace).toString()}, 0, all, 0, 7);
        System.arraycopy(args, 0, all, 7, args.length);
        return Cli.run(dir, all);
    }

    /** The program's output untraced, run the way Cli runs it (stdin from /dev/null, in dir). */
    static String plain(String... command) throws Exception {
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile())).start();
        String out = new String(p.getInputStream().readAllBytes());
        p.waitFor();
        return out;
    }

    @Test
    void largeHeapBuffersOfPollMincoreAndWritevWorkAsUntraced() throws Exception {
        String prog = dir.resolve("syscall_buffers").toString();
        String untraced = plain(prog);
        assertThat(untraced).contains("poll 2000 ", "mincore 0 ", "writev 196608", "writev of 100 buffers 500000",
                "sched_getparam 0 priority 0");
        var r = memtrace("sysbufs.trace", "--", prog);
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo(untraced);
        assertThat(Files.size(dir.resolve("writev.out"))).isEqualTo(196608 + 500000);
        TraceFile t = TraceFile.read(dir.resolve("sysbufs.trace"));
        List<Line> fetched = t.of('G').stream().filter(l -> l.raw() && l.fields().getLast().equals("writev")).toList();
        // 24 buffers opened one by one; then 100, more than the agent opens one by one: all memory open, same records
        assertThat(fetched).hasSize(124);
        assertThat(fetched.subList(0, 24)).allSatisfy(g -> assertThat(g.field(2)).isEqualTo("8192"));
        assertThat(fetched.subList(24, 124)).allSatisfy(g -> assertThat(g.field(2)).isEqualTo("5000"));
    }

    @Test
    void theProgramsAlternateSignalStackIsKept() throws Exception {
        String prog = dir.resolve("altstack").toString();
        String untraced = plain(prog);
        assertThat(untraced).contains("altstack set: 1", "10 of 10", "recovered from the stack overflow: 1");
        var r = memtrace("altstack.trace", "--", prog);
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo(untraced);
        TraceFile t = TraceFile.read(dir.resolve("altstack.trace"));
        assertThat(t.comments().getLast()).startsWith("exit status=0");
    }

    @Test
    void abortLeavesAFatalLine() throws Exception {
        var r = memtrace("abort.trace", "--", dir.resolve("ends").toString(), "abort");
        assertThat(r.status()).isEqualTo(128 + 6);
        assertThat(r.stderr()).contains("killed by SIGABRT");
        TraceFile t = TraceFile.read(dir.resolve("abort.trace"));
        assertThat(t.comments().getLast()).startsWith("fatal signal 6 (SIGABRT)");
    }

    @Test
    void aFailedExecIsSaidToHaveFailedAndTracingGoesOn() throws Exception {
        var r = memtrace("exec.trace", "--", dir.resolve("ends").toString(), "exec");
        assertThat(r.status()).as(r.stderr()).isEqualTo(3);
        assertThat(r.stderr()).doesNotContain("executed /nonexistent/prog").contains("exited with status 3");
        TraceFile t = TraceFile.read(dir.resolve("exec.trace"));
        int exec = t.comments().indexOf(t.comments().stream().filter(c -> c.startsWith("exec ")).findFirst().orElseThrow());
        assertThat(t.comments().get(exec)).startsWith("exec /nonexistent/prog ");
        assertThat(t.comments().get(exec + 1)).startsWith("exec-failed /nonexistent/prog errno=2 ");
        long counter = RunIntegrationTest.symbolIn(dir.resolve("ends"), "counter");
        assertThat(t.of('S').stream().filter(l -> l.raw() && l.number(0) == counter)).hasSize(2);
    }

    @Test
    void namesWithCommasAndSpacesAreEscapedAndEveryLineParses() throws Exception {
        var r = memtrace("names.trace", "--", "./d,1");
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo("read back 42\n");
        TraceFile t = TraceFile.read(dir.resolve("names.trace")); // checks every line against the grammar
        assertThat(t.comments()).anyMatch(c -> c.startsWith("module ") && c.contains("/d%2C1 "))
                .anyMatch(c -> c.startsWith("mapping ") && c.endsWith("/we%2Cird%20file.dat"));
        assertThat(t.of('S')).anySatisfy(s -> {
            assertThat(s.field(1)).isEqualTo("we%2Cird%20file.dat");
            assertThat(s.field(3)).isEqualTo("4");
        });
    }

    /** Issue 26: RLIMIT_AS lowered to 256 MiB left the agent no room (the handler spun, or the program crashed). */
    @Test
    void aProgramThatLowersItsAddressSpaceRunsAsUntraced() throws Exception {
        String prog = dir.resolve("as_limit").toString();
        String untraced = plain(prog);
        assertThat(untraced).contains("setrlimit 0\ngetrlimit 268435456 268435456\n", "mmap 64 MiB ok\nmmap 1 GiB ENOMEM\n");
        var r = memtrace("as_limit.trace", "--", prog);
        assertThat(r.status()).as(r.stderr()).isZero();
        String mallocs = "malloc 1 MiB x ";
        assertThat(r.stdout().substring(0, r.stdout().indexOf(mallocs))).isEqualTo(untraced.substring(0, untraced.indexOf(mallocs)));
        // untraced, code and stacks share the 256 MiB with the heap; traced, the heap alone is capped at it
        long blocks = Long.parseLong(r.stdout().substring(r.stdout().indexOf(mallocs) + mallocs.length()).strip());
        assertThat(blocks).isBetween(200L, 256L);
        TraceFile t = TraceFile.read(dir.resolve("as_limit.trace"));
        long g = RunIntegrationTest.symbolIn(dir.resolve("as_limit"), "g");
        assertThat(t.of('S').stream().filter(l -> l.raw() && l.number(0) >= g && l.number(0) < g + 8192)).hasSize(1024);
        assertThat(t.comments().getLast()).startsWith("exit status=0");
    }

    /**
     * A limit set on the process from outside (here by its forked child) is the kernel's: the agent could not
     * map its table of openings and the fault handler spun at 100 % CPU. Recording stops, said in one line,
     * and the program runs on as untraced.
     */
    @Test
    void anAddressSpaceFullFromOutsideStopsRecordingInOneLineNeverHangs() throws Exception {
        String prog = dir.resolve("as_limit_outside").toString();
        String untraced = plain(prog);
        assertThat(untraced).startsWith("limit set by the child: 1\n");
        var r = memtrace("as_limit_outside.trace", "--", prog);
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo(untraced);
        assertThat(r.stderr()).containsOnlyOnce("memtrace: the agent could not map memory for its tables (address space full): "
                + "recording stops here\n");
        assertThat(TraceFile.read(dir.resolve("as_limit_outside.trace")).comments().getLast()).startsWith("exit status=0");
    }

    /**
     * Issue 26: a thread made by a raw clone3 on an mmapped stack crashed the traced program (139, once a
     * hang), or its stores got the parent's tid, or with a TLS of its own none was recorded. Fault mode
     * keeps its per-thread state in glibc's thread block: such a clone is refused (ENOSYS) in one line.
     */
    @ParameterizedTest
    @ValueSource(strings = {"shared", "own"})
    void aRawClone3ThreadIsRefusedInOneLine(String tls) throws Exception {
        String prog = dir.resolve("raw_clone3").toString();
        assertThat(plain(prog, tls)).isEqualTo("pthread ok\nclone3 thread ok\n");
        var r = memtrace("clone3-" + tls + ".trace", "--", prog, tls);
        assertThat(r.status()).as(r.stderr()).isEqualTo(3);
        assertThat(r.stdout()).isEqualTo("pthread ok\nclone3 failed: Function not implemented\n");
        assertThat(r.stderr()).containsOnlyOnce("memtrace: fault mode cannot trace a thread made by a raw clone3 (no glibc "
                + "thread block): the call fails with ENOSYS\n");
        TraceFile t = TraceFile.read(dir.resolve("clone3-" + tls + ".trace"));
        long data = RunIntegrationTest.symbolIn(dir.resolve("raw_clone3"), "data");
        List<Line> stores = t.of('S').stream().filter(l -> l.raw() && l.number(0) >= data && l.number(0) < data + 800).toList();
        assertThat(stores).as("the pthread's stores, under its own tid").hasSize(100);
        String mainTid = t.comments().stream().filter(c -> c.startsWith("thread ") && c.endsWith("parent=0")).findFirst().orElseThrow()
                .split(" ")[1];
        assertThat(stores).allSatisfy(l -> assertThat(l.field(4)).isNotEqualTo(mainTid));
        assertThat(t.comments().getLast()).startsWith("exit status=3");
    }

    /**
     * Issue 26: an io_uring read into the heap failed with EFAULT (the kernel cannot write a protected page,
     * and it writes long after the call) and nothing said why. io_uring_setup is refused in one line; the
     * program falls back to read(), whose store into the heap is recorded.
     */
    @Test
    void ioUringIsRefusedInOneLineAndTheFallbackIsTraced() throws Exception {
        String prog = dir.resolve("io_uring_read").toString();
        String untraced = plain(prog);
        assertThat(untraced).isIn("io_uring read 9: ring text\n", "io_uring unavailable (Function not implemented), read 9: ring text\n");
        var r = memtrace("io_uring.trace", "--", prog);
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo("io_uring unavailable (Function not implemented), read 9: ring text\n");
        assertThat(r.stderr()).containsOnlyOnce("memtrace: fault mode cannot trace io_uring (the kernel touches its buffers after "
                + "the call): io_uring_setup fails with ENOSYS\n");
        TraceFile t = TraceFile.read(dir.resolve("io_uring.trace"));
        assertThat(t.of('W').stream().filter(w -> !w.raw() && w.field(0).startsWith("<malloc0001@main") && w.field(2).equals("9")
                && w.fields().getLast().equals("read"))).hasSize(1);
    }

    @Test
    void killingMemtraceOutrightEndsTheProgramToo() throws Exception {
        Path out = dir.resolve("killed.stdout");
        Process memtrace = Cli.start(dir, out, dir.resolve("killed.stderr"), "run", "--mode", "fault", "-o", dir.resolve("killed.trace").toString(),
                "--", dir.resolve("forever").toString());
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (!Files.readString(out).contains("running") && System.nanoTime() < deadline) Thread.sleep(50);
        var program = memtrace.descendants().filter(ph -> ph.info().command().orElse("").endsWith("forever")).findFirst();
        assertThat(program).isPresent();
        memtrace.destroyForcibly(); // SIGKILL: no shutdown hook runs
        assertThat(memtrace.waitFor(30, TimeUnit.SECONDS)).isTrue();
        // the agent asked the kernel for SIGKILL when its parent dies
        assertThat(program.get().onExit().get(30, TimeUnit.SECONDS).isAlive()).isFalse();
    }
}
