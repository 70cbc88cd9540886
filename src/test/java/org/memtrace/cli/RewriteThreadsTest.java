package org.memtrace.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.memtrace.testutil.Cli;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.TraceFile;

/**
 * Threads made by pthread_create in {@code memtrace run --mode rewrite}, libc rewritten: a new thread runs
 * libc's start_thread with every signal blocked, so its first probes must not fault; the creator hands it
 * a buffer through the runtime's TLS image (agent/runtime/rt_thread_start.c). Each thread's fill is in the
 * trace under its own thread id, and its first accesses are start_thread's, in libc, before them.
 */
class RewriteThreadsTest {
    @TempDir Path dir;

    @Test
    void threadsRunAndEachOneIsTracedFromItsFirstInstruction() throws Exception {
        Path prog = Gcc.compile(dir, "rewrite_threads.c", "threads", "-O1", "-pthread");
        for (int n : new int[] {1, 4, 8}) {
            Path trace = dir.resolve("threads" + n + ".trace");
            var r = Cli.run(dir, "run", "--mode", "rewrite", "-o", trace.toString(), "--", prog.toString(), Integer.toString(n));
            assertThat(r.status()).as(r.stderr()).isZero();
            assertThat(r.stdout()).isEqualTo(Gcc.run(List.of(prog.toString(), Integer.toString(n))));
            Map<String, Long> fills = new TreeMap<>();
            Map<String, String> firstRegion = new HashMap<>();
            List<String> mainSums = new ArrayList<>();
            String mainTid = null;
            for (var l : TraceFile.read(trace).lines()) {
                if (!l.access()) continue;
                String tid = l.field(4), fn = l.field(2).replaceAll("\\+.*", "");
                if (mainTid == null) mainTid = tid;
                firstRegion.putIfAbsent(tid, l.field(2));
                if (fn.equals("fill_w")) fills.merge(tid, 1L, Long::sum);
                if (fn.equals("sum_w") && tid.equals(mainTid)) mainSums.add(l.field(0));
            }
            assertThat(fills).as("one row of stores per thread, and the ret's load (the int3 fallback)").hasSize(n).allSatisfy((tid, count) -> {
                assertThat(count).isEqualTo(1001L);
                // the thread's first traced access is start_thread's in libc, not the program's
                assertThat(firstRegion.get(tid)).doesNotStartWith("fill_w").doesNotStartWith("worker");
            });
            assertThat(fills).doesNotContainKey(mainTid);
            assertThat(mainSums).as("8 rows, and the ret's load (the int3 fallback)").hasSize(8001)
                    .filteredOn(x -> x.startsWith("data+")).hasSize(8000);
        }
    }

    /**
     * Threads libc starts itself (a SIGEV_THREAD timer's helper, and a thread per expiry that runs the notify
     * function), not through the pthread_create the runtime wraps: no buffer is handed to them, and they start
     * with every signal blocked but SIGSEGV and SIGTRAP (the int3 fallback's rt_sigprocmask sites), so their
     * first probe gets them a buffer. Each tick's 100 stores are in the trace under its own thread, once,
     * and the summary counts the four threads.
     */
    @Test
    void threadsLibcStartsItselfAreTracedAndCounted() throws Exception {
        Path prog = Gcc.compile(dir, "rewrite_timer.c", "timer", "-O1", "-pthread");
        Path trace = dir.resolve("timer.trace");
        var r = Cli.run(dir, "run", "--mode", "rewrite", "-o", trace.toString(), "--", prog.toString());
        assertThat(r.status()).as(r.stderr()).isZero();
        assertThat(r.stdout()).isEqualTo("3 ticks, sum 29700\n");
        assertThat(r.stderr()).contains("\n  4 of the threads started without the program's pthread_create (libc's own: SIGEV_THREAD timers"
                + " and the like): recorded from their first probe\n");
        var t = TraceFile.read(trace);
        List<String> starts = t.comments().stream().filter(c -> c.matches("thread \\d+ start .*")).toList();
        assertThat(starts).as("main, the timer's helper, a thread per expiry").hasSize(5).allMatch(c -> c.endsWith(" parent=0"));
        Map<String, List<String>> stores = new TreeMap<>();
        Map<String, Integer> returns = new TreeMap<>();
        for (var l : t.lines()) {
            if (!l.access() || !l.field(2).startsWith("fill_t+")) continue;
            if (l.type() == 'S') stores.computeIfAbsent(l.field(4), k -> new ArrayList<>()).add(l.field(0));
            else returns.merge(l.field(4), 1, Integer::sum);
        }
        assertThat(stores).as("three ticks, each in a thread of its own").hasSize(3);
        assertThat(returns).as("fill_t's ret, through the int3 fallback, once per tick").hasSize(3).containsOnlyKeys(stores.keySet())
                .allSatisfy((tid, n) -> assertThat(n).isEqualTo(1));
        List<List<String>> rows = new ArrayList<>(stores.values());
        rows.sort(java.util.Comparator.comparing(List::getFirst, java.util.Comparator.comparingInt(x -> Integer.parseInt(x.substring(5)))));
        for (int k = 0; k < 3; k++) {
            List<String> row = new ArrayList<>();
            for (int i = 0; i < 100; i++) row.add("rows+" + (400 * k + 4 * i));
            assertThat(rows.get(k)).as("row " + k).containsExactlyElementsOf(row);
        }
        // a tick's thread ends once (its key destructors' later rounds write to the sink; they began it again,
        // four times), if it ends before the process does; the helper waits until the process exits
        List<String> exits = t.comments().stream().filter(c -> c.matches("thread \\d+ exit .*")).map(c -> c.split(" ")[1]).toList();
        assertThat(exits).doesNotHaveDuplicates().isSubsetOf(stores.keySet());
    }
}
