package org.memtrace.analysis;

import static org.assertj.core.api.Assertions.*;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import java.util.List;
import org.memtrace.event.Event;
import org.memtrace.heap.SymbolicNaming;
import org.memtrace.trace.InstructionShapes;

class SummaryTest {
    /** The summary counts what the interpretation stage hands it, as in every command. */
    static Interpretation stage(Summary s, InstructionShapes shapes) {
        return new Interpretation(new SymbolicNaming(), shapes, List.of(s));
    }

    @Test
    void countsWhatTheTracePrints() {
        InstructionShapes shapes = ip -> ip == 0x10 ? new InstructionShapes.Shape(4, true) : new InstructionShapes.Shape(8, false);
        var s = new Summary(false);
        var in = stage(s, shapes);
        long[] none = new long[6];
        in.accept(new Event.Hello(1, 1, 4096, 0, 0, 15));
        in.accept(new Event.Mapping(1, 0x404000, 0x405000, 0, 3, true, "/p"));
        in.accept(new Event.Mapping(1, 0x400000, 0x401000, 0, 5, false, "/p"));
        in.accept(new Event.Range(1, true, 0x500000, 0x520000, Event.RegionKind.HEAP, 3));
        in.accept(new Event.Access(1, 0x10, 0x404000, true, false));           // RMW: load + store
        in.accept(new Event.Access(1, 0x20, 0x404ffc, false, false));          // straddle ...
        in.accept(new Event.Access(1, 0x20, 0x405000, false, true));           // ... second half not counted
        in.accept(new Event.Access(2, 0x30, 0x500000, true, false));
        in.accept(new Event.Block(1, Event.BlockOp.COPY, false, 0, 1, 2, 3, 1));
        in.accept(new Event.Block(1, Event.BlockOp.STORE, true, 0, 1, 0, 3, 0));
        in.accept(new Event.Block(1, Event.BlockOp.FETCH, true, 0, 0, 2, 3, 1));
        in.accept(new Event.Alloc(1, Event.AllocFunction.MALLOC, 0, 0x500000, 32, none));
        in.accept(new Event.Alloc(1, Event.AllocFunction.FREE, 0, 0, 0, new long[] {0x500000, 0, 0, 0, 0, 0}));
        in.accept(new Event.Alloc(1, Event.AllocFunction.FREE, 0, 0, 0, none));
        in.accept(new Event.Stats(1, 4, 4, 1, 7, 0));
        assertThat(s.loads()).isEqualTo(2);
        assertThat(s.stores()).isEqualTo(2);
        assertThat(s.faults()).isEqualTo(4);
        assertThat(s.regions()).isEqualTo(2);
        assertThat(s.threads()).isEqualTo(2);
        assertThat(s.allocations()).isEqualTo(1);
        assertThat(s.releases()).isEqualTo(1);

        var text = new StringWriter();
        s.print(new PrintWriter(text), 5, Duration.ofMillis(1500));
        assertThat(text.toString()).contains("loads", "block copies", "windows at risk                  7",
                "events lost                      5", "elapsed                      1.500 s");
    }

    static Event.ProbeSite site(Event.ProbeKind kind, int flags, int weightMa, int weightAia, int refs, int ma, int aia) {
        return new Event.ProbeSite(0x401000, kind, 4, 0, flags, weightMa, weightAia, refs, ma, aia, Event.SelectionTotals.NONE);
    }

    /** The writer's wait of a .mtr trace (its MT_WRITER record) is in the JSON summary as in the table. */
    @Test
    void theWritersWaitIsInTheJsonSummary(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        var s = new Summary(true);
        java.nio.file.Path json = dir.resolve("s.json");
        s.jsonTo(json, json);
        var in = stage(s, InstructionShapes.UNKNOWN);
        in.accept(new Event.Writer(1, 3_600_000, 4, 12));
        s.finish(Ending.offline(0, 1, 0, java.util.Map.of()));
        var tree = new com.fasterxml.jackson.databind.ObjectMapper().readTree(json.toFile());
        assertThat(tree.get("writer").toString()).isEqualTo("{\"waitMs\":4,\"waits\":4,\"buffers\":12}");
        var text = new StringWriter();
        s.print(new PrintWriter(text), 0, null);
        assertThat(text.toString()).contains("\n  program waited for the writer: 4 ms (4 times no buffer was free, of 12 buffers written before exit)\n");
    }

    /**
     * Rewrite mode runs no writer thread: the program's threads encode and write what they fill, and the summary
     * says so with that time instead of a wait of 0 ms that nothing could have made longer.
     */
    @Test
    void withoutAWriterThreadTheSummarySaysTheProgramWroteItsOwnTrace(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        var s = new Summary(true);
        java.nio.file.Path json = dir.resolve("s.json");
        s.jsonTo(json, json);
        var in = stage(s, InstructionShapes.UNKNOWN);
        in.accept(new Event.Writer(1, 0, 0, 15, true, 35_400_000, 15));
        s.finish(Ending.offline(0, 1, 0, java.util.Map.of()));
        var tree = new com.fasterxml.jackson.databind.ObjectMapper().readTree(json.toFile());
        assertThat(tree.get("writer").toString()).isEqualTo("{\"waitMs\":0,\"waits\":0,\"buffers\":15,\"ownMs\":35,\"ownBuffers\":15}");
        var text = new StringWriter();
        s.print(new PrintWriter(text), 0, null);
        assertThat(text.toString()).contains("\n  program wrote its trace itself: 35 ms encoding and writing 15 buffers in its own threads"
                + " (no writer thread in rewrite mode; the last buffers, written at exit, not counted)\n")
                .doesNotContain("waited for the writer");
    }

    @Test
    void aCompiledInTraceCountsProbesAndAFullBuildHasNoAccuracy() {
        var s = new Summary(true);
        var in = stage(s, InstructionShapes.UNKNOWN);
        in.accept(new Event.Probe(1, 0x404000, site(Event.ProbeKind.MODIFY, 0x02, 1, 1, 2, 2, 2)));
        in.accept(new Event.Probe(1, 0x404000, site(Event.ProbeKind.STORE, 0x00, 1, 1, 0, 0, 0)));
        in.accept(new Event.Block(1, Event.BlockOp.STORE, false, 0x401000, 0x404000, 0, 32, Event.BlockFunction.REP_STOS.code));
        in.accept(new Event.Block(1, Event.BlockOp.COPY, false, 0x401000, 0x404000, 0x405000, 32, Event.BlockFunction.MEMCPY.code));
        assertThat(s.loads()).isEqualTo(1);
        assertThat(s.stores()).isEqualTo(2);
        assertThat(s.probes()).isEqualTo(3);
        assertThat(s.accuracy()).isEmpty();
        assertThat(s.counts(0)).containsKey("probes").doesNotContainKeys("faults", "windowsAtRisk", "blockExecutions");
        var text = new StringWriter();
        s.print(new PrintWriter(text), 0, null);
        assertThat(text.toString()).contains("uninstrumented libraries").doesNotContain("elapsed", "accuracy");
    }

    static final String CC_LINE = "  only code built with memtrace cc is traced: uninstrumented libraries' own accesses are not in the trace";
    static final String REWRITE_LINE =
            "  only rewritten code is traced: ld.so's start-up, memtrace's runtime and the modules the rewrite lines name untraced"
                    + " are not in the trace";

    /** The last line says what the mode leaves out: a cc build, rewrite mode (said by the run or by the trace), faults. */
    @Test
    void theLastLineSaysWhatTheModeLeavesOut() {
        assertThat(lastLine(new Summary(true), null)).isEqualTo(CC_LINE);
        assertThat(lastLine(new Summary(true).rewritten(true), null)).isEqualTo(REWRITE_LINE);
        // a saved rewrite-mode trace, printed: its int3 fallback record says which mode wrote it
        assertThat(lastLine(new Summary(true), new Event.Fallback(1, 3, 4)))
                .isEqualTo("  int3 fallback: 4 accesses recorded in 3 traps (instructions no jump could patch)\n" + REWRITE_LINE);
        assertThat(lastLine(new Summary(false), null)).as("fault mode traces every module").isEmpty();
    }

    /** Threads whose start names no creator, after the process's first: counted once each, said in a line. */
    @Test
    void threadsStartedWithoutTheWrapperAreCountedOnce() {
        var s = new Summary(true).rewritten(true);
        var in = stage(s, InstructionShapes.UNKNOWN);
        in.accept(new Event.ThreadEvent(10, true, 0));  // the process's first thread
        in.accept(new Event.ThreadEvent(11, true, 10)); // through pthread_create: its creator named
        in.accept(new Event.ThreadEvent(12, true, 0));
        in.accept(new Event.ThreadEvent(12, false, 0));
        in.accept(new Event.ThreadEvent(12, true, 0));  // begun again: still one thread
        in.accept(new Event.ThreadEvent(13, true, 0));
        assertThat(s.counts(0)).containsEntry("threadsWithoutCreator", 2L);
        var text = new StringWriter();
        s.print(new PrintWriter(text), 0, null);
        assertThat(text.toString()).contains("\n  2 of the threads started without the program's pthread_create (libc's own:"
                + " SIGEV_THREAD timers and the like): recorded from their first probe\n").doesNotContain("threads without");
        assertThat(new Summary(false).counts(0)).doesNotContainKey("threadsWithoutCreator");
    }

    /** The summary's lines after its counts, after one probe (and {@code extra}, when not null). */
    private static String lastLine(Summary s, Event extra) {
        var in = stage(s, InstructionShapes.UNKNOWN);
        in.accept(new Event.Probe(1, 0x404000, site(Event.ProbeKind.LOAD, 0x00, 1, 1, 0, 0, 0)));
        if (extra != null) in.accept(extra);
        var text = new StringWriter();
        s.print(new PrintWriter(text), 0, null);
        String t = text.toString().stripTrailing();
        return String.join("\n", t.substring(t.indexOf("\n  events lost") + 1).lines().skip(1).toList());
    }

    @Test
    void aSelectiveBuildsAccuracyWeighsEachBlockByItsExecutions() {
        var s = new Summary(true);
        var in = stage(s, InstructionShapes.UNKNOWN);
        // Block X (refs 4, ma 2, aia 3) runs 3 times, block Y (refs 2, ma 2, aia 2) once: MA 8/14, AIA 11/14.
        for (int i = 0; i < 3; i++) {
            in.accept(new Event.Probe(1, 0x404000, site(Event.ProbeKind.LOAD, 0x06, 2, 3, 4, 2, 3)));
            in.accept(new Event.Probe(1, 0x404000, site(Event.ProbeKind.LOAD, 0x04, 1, 1, 0, 0, 0)));
        }
        in.accept(new Event.Probe(1, 0x404000, site(Event.ProbeKind.LOAD, 0x06, 1, 1, 2, 2, 2)));
        var a = s.accuracy().orElseThrow();
        assertThat(a.blockExecutions()).isEqualTo(4);
        assertThat(a.ma()).isCloseTo(8.0 / 14, within(1e-12));
        assertThat(a.aia()).isCloseTo(11.0 / 14, within(1e-12));
        var text = new StringWriter();
        s.print(new PrintWriter(text), 0, null);
        assertThat(text.toString()).contains("accuracy ma                  57.14 %", "accuracy aia                 78.57 %");
    }
}
