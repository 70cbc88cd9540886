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
}
