package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfSymbol;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TraceFile;

/**
 * Processes and threads under {@code memtrace run --mode rewrite} (docs/rewriting.md, "Adversarial programs"):
 * fork, vfork (whose child's store its parent sees, as natively), posix_spawn, system, a raw clone without a
 * TLS of its own (given a copy of its creator's), a clone without CLONE_VM (a fork) and an exec, in an {@code -fcf-protection} (endbr64) build; and threads that a linked
 * library's constructor starts before memtrace's runtime rewrites the code.
 */
class RewriteProcessesTest {
    @TempDir Path dir;

    private Cli.Result rewrite(Path trace, Path prog) throws Exception {
        var r = Cli.run(dir, "run", "--mode", "rewrite", "--addresses", "raw", "-q", "-o", trace.toString(), "--", prog.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).as("output as native").isEqualTo(Gcc.run(List.of(prog.toString())));
        return r;
    }

    private static long symbol(Path file, String name) throws Exception {
        return ElfFile.read(file).symtab().stream().filter(s -> s.name().equals(name)).mapToLong(ElfSymbol::value).findFirst().orElseThrow();
    }

    @Test
    void forkVforkPosixSpawnSystemRawCloneAndExecBehaveAsNatively() throws Exception {
        Path prog = Gcc.compile(dir, "rw_adv_procs.c", "procs", "-O0", "-no-pie", "-fcf-protection");
        assertThat(Gcc.run(List.of(prog.toString()))).isEqualTo("""
                fork child exited 7, parent's forked[99] 0
                vfork child exited 0, vforked 1
                spawned
                posix_spawn child exited 0
                from system
                system returned 0
                clone child stored cloned[99] 1099
                clone process exited 9, parent's forked[99] 0
                again
                """);
        Path trace = dir.resolve("procs.trace");
        rewrite(trace, prog);
        TraceFile t = TraceFile.read(trace);
        assertThat(t.comments().getLast()).as("the trace ends at the exec").startsWith("exec /proc/self/exe tid=");
        long vforked = symbol(prog, "vforked"), forked = symbol(prog, "forked");
        // the parent's own accesses: printf's argument loads; the children's stores are not in its trace (the fork
        // child and the clone without CLONE_VM write a trace of their own, the vfork child records into the sink)
        assertThat(t.lines().stream().filter(l -> l.access() && l.number(0) == vforked).map(l -> String.valueOf(l.type()))).containsExactly("L");
        assertThat(t.lines().stream().filter(l -> l.access() && l.number(0) >= forked && l.number(0) < forked + 800)
                .map(l -> l.type() + l.field(0))).containsExactly("L0x" + Long.toHexString(forked + 99 * 8), "L0x" + Long.toHexString(forked + 99 * 8));
        // the clone without CLONE_VM is a fork (its child once wrote its full buffers into this trace)
        assertThat(t.comments().stream().filter(c -> c.startsWith("fork "))).as("fork, vfork and clone").hasSize(3);
        // the clone child ran on a copy of main's TLS (rt_thread_start.c): its 100 stores under a thread of its own
        String main = mainThread(t);
        long cloned = symbol(prog, "cloned");
        var stores = t.lines().stream().filter(l -> l.access() && l.type() == 'S' && l.number(0) >= cloned && l.number(0) < cloned + 800).toList();
        assertThat(stores).hasSize(100);
        Set<String> tids = stores.stream().map(l -> l.field(4)).collect(Collectors.toSet());
        assertThat(tids).hasSize(1).doesNotContain(main);
        String child = tids.iterator().next();
        assertThat(t.comments()).contains("thread " + child + " start parent=" + main, "thread " + child + " exit code=0");
    }

    private static String mainThread(TraceFile t) {
        return t.comments().stream().filter(c -> c.startsWith("start tid=")).findFirst().orElseThrow().substring("start tid=".length());
    }

    /**
     * The CI failure this guards against: a raw clone's child and its creator storing at once, 20 rounds. They
     * once shared one TLS cursor (the child had no TLS of its own) and their records corrupted the trace (4 of 5
     * runs: "unknown tag type", SIGSEGV). Each child's 1,000 stores are under its own thread, none is lost, and
     * the creator's 20,000 are all under the main thread.
     */
    @Test
    void rawCloneChildrenStoringAlongsideTheirCreatorEachRecordUnderTheirOwnThread() throws Exception {
        Path prog = Gcc.compile(dir, "rw_adv_clone_race.c", "race", "-O0", "-no-pie");
        assertThat(Gcc.run(List.of(prog.toString()))).isEqualTo("child 10180000 main 9990000\n");
        Path trace = dir.resolve("race.trace");
        rewrite(trace, prog);
        TraceFile t = TraceFile.read(trace);
        String main = mainThread(t);
        long child = symbol(prog, "child_data"), mine = symbol(prog, "main_data");
        var byThread = t.lines().stream().filter(l -> l.access() && l.type() == 'S' && l.number(0) >= child && l.number(0) < child + 8000)
                .collect(Collectors.groupingBy(l -> l.field(4), Collectors.counting()));
        assertThat(byThread).hasSize(20).doesNotContainKey(main).allSatisfy((tid, n) -> {
            assertThat(n).isEqualTo(1000);
            assertThat(t.comments()).contains("thread " + tid + " start parent=" + main, "thread " + tid + " exit code=0");
        });
        assertThat(t.lines().stream().filter(l -> l.access() && l.type() == 'S' && l.number(0) >= mine && l.number(0) < mine + 8000)
                .map(l -> l.field(4)).collect(Collectors.groupingBy(tid -> tid, Collectors.counting()))).isEqualTo(Map.of(main, 20000L));
    }

    /**
     * rw_adv_ctorlib.c's constructor starts a spinning and a waiting thread. A preloaded library is initialized
     * after the program's own libraries, so the threads existed while the code was rewritten (and the program
     * died of SIGSEGV once in a few runs); the runtime is now linked -z initfirst, so the constructor runs after
     * the rewrite, traced, and its threads start through the runtime's pthread_create. The program ends as
     * natively, and the waiting thread's 1,000 stores are in the trace under its own thread, whose creator is
     * the main thread.
     */
    @Test
    void threadsALinkedLibrarysConstructorStartsAreTracedFromTheirStart() throws Exception {
        Path lib = Gcc.compile(dir, "rw_adv_ctorlib.c", "libctor.so", "-O1", "-shared", "-fPIC", "-pthread");
        Path prog = Gcc.compile(dir, "rw_adv_ctormain.c", "ctormain", "-O0", "-Wl,--no-as-needed", lib.toString(), "-Wl,-rpath," + dir);
        assertThat(Gcc.run(List.of(prog.toString()))).isEqualTo("lib 1498501\n");
        Path trace = dir.resolve("ctor.trace");
        rewrite(trace, prog);
        TraceFile t = TraceFile.read(trace);
        long bias = t.comments().stream().filter(c -> c.startsWith("module " + lib + " "))
                .map(c -> Long.parseUnsignedLong(c.replaceAll(".* bias=0x([0-9a-f]+) .*", "$1"), 16)).findFirst().orElseThrow();
        long data = bias + symbol(lib, "lib_data");
        var stores = t.lines().stream().filter(l -> l.access() && l.type() == 'S' && l.number(0) >= data && l.number(0) < data + 8000).toList();
        assertThat(stores).hasSize(1000);
        Set<String> tids = stores.stream().map(l -> l.field(4)).collect(Collectors.toSet());
        String main = mainThread(t);
        assertThat(tids).hasSize(1).doesNotContain(main);
        assertThat(t.comments()).as("started by the constructor's pthread_create, after the rewrite")
                .contains("thread " + tids.iterator().next() + " start parent=" + main);
        // the constructor ran rewritten: its loads of `spins` while it waits for the spinner (at least one) are in
        // main's trace, besides lib_finish's one
        long spins = bias + symbol(lib, "spins");
        assertThat(t.lines().stream().filter(l -> l.access() && l.number(0) == spins && l.field(4).equals(main))).hasSizeGreaterThanOrEqualTo(2);
    }
}
