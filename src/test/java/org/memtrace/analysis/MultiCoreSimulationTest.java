package org.memtrace.analysis;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.memtrace.cache.CacheGeometry;
import org.memtrace.cache.CoherentCaches;
import org.memtrace.cache.LevelStats;
import org.memtrace.cache.Policy;
import org.memtrace.event.Event;
import org.memtrace.trace.Naming;

/** A hand-built sequence of three threads on two cores, each transfer's verdict worked out in the comments. */
class MultiCoreSimulationTest {
    private static final CacheGeometry L1 = new CacheGeometry(256, 2, 64);

    /** Names {@code table} at 0x5000 (128 bytes). */
    private static final Naming NAMING = new Naming() {
        @Override public void observe(Event event) {}
        @Override public String region(long address) { return "prog"; }
        @Override public String data(long address) {
            return address >= 0x5000 && address < 0x5080 ? "table+" + (address - 0x5000) : "0x" + Long.toHexString(address);
        }
        @Override public String code(long ip) { return "main+" + ip; }
        @Override public String block(Event.Alloc allocation) { return NO_BLOCK; }
    };

    private final MultiCoreSimulation sim = new MultiCoreSimulation(new CoherentCaches(List.of(L1), true, 2, Policy.LRU, 1), NAMING);
    private long seq;

    private void access(int tid, long address, int size, boolean store) {
        sim.access(Access.of(NAMING, seq++, tid, 0x400000, address, size, store));
    }

    @Test
    void transfersAreJudgedByTheBytesTheHolderUsed() throws Exception {
        access(10, 0x5000, 8, true);   // thread 10 on core 0: a cold store miss
        access(20, 0x5008, 8, true);   // thread 20 on core 1: core 0 wrote 0-7, this store writes 8-15: HITM, false
        access(10, 0x5000, 8, false);  // core 0 reads 0-7 from core 1, which wrote 8-15: HITM, false
        access(20, 0x5000, 8, false);  // core 1's clean copy hits: no transfer; core 1 has read 0-7
        access(10, 0x5000, 8, true);   // core 0 writes 0-7, which core 1 read: invalidation, true
        access(30, 0x5008, 8, false);  // thread 30, also on core 0: a hit, no transfer
        access(20, 0x503c, 8, true);   // two lines: 60-63 of the first against core 0's 0-15: HITM, false; the next line is cold

        assertThat(sim.verdicts(10)).isEqualTo(Map.of(0x5000L, "false and true sharing table+0 hitm=3 inv=3 false=3 true=1"));
        CoherentCaches c = sim.caches();
        assertThat(c.stats(0)).containsExactly(new LevelStats("L1", L1, 2, 2, 1, 1, 0));
        assertThat(c.stats(1)).containsExactly(new LevelStats("L1", L1, 1, 3, 0, 3, 0));
        assertThat(c.invalidated(0)).isEqualTo(2);
        assertThat(c.invalidated(1)).isEqualTo(1);
        assertThat(c.hitm(0)).isEqualTo(2);
        assertThat(c.hitm(1)).isEqualTo(1);

        StringWriter text = new StringWriter();
        sim.writeTo(new CacheSimulation.Output(new PrintWriter(text), null, 10, "t", "lru", 1));
        sim.finish(Ending.offline(7, 7, 0, Map.of()));
        assertThat(text.toString())
                .contains("t, policy lru, 2 cores, L1 private, 3 threads, 7 events, 7 loads and stores")
                .contains("lines moved between cores (1; top 1 by HITM + invalidations)")
                // bytes from the line's first transfer on
                .contains("thread 20 (core 1): read 0-7, wrote 8-15,60-63  (table+8)")
                .contains("thread 10 (core 0): read 0-7, wrote 0-7  (table+0)")
                .contains("thread 30 (core 0): read 8-15, wrote -  (table+8)");
    }

    /**
     * The holder of a line is named even when it never touches the line again: a thread that wrote its half
     * and ended before the other began (as a program built with memtrace cc often records two short threads).
     */
    @Test
    void aFinishedHolderIsNamedWithTheBytesItsCopyWasUsedFor() throws Exception {
        access(10, 0x5000, 8, true);   // thread 10 on core 0 writes 0-7 and reads them, then ends
        access(10, 0x5000, 8, false);
        access(20, 0x5008, 8, false);  // thread 20 on core 1 reads 8-15: HITM, false
        access(20, 0x5008, 8, true);   // and writes them: invalidation, false

        assertThat(sim.verdicts(10)).isEqualTo(Map.of(0x5000L, "false sharing table+0 hitm=1 inv=1 false=2 true=0"));
        StringWriter text = new StringWriter();
        sim.writeTo(new CacheSimulation.Output(new PrintWriter(text), null, 10, "t", "lru", 1));
        sim.finish(Ending.offline(4, 4, 0, Map.of()));
        assertThat(text.toString())
                .contains("thread 10 (core 0): read 0-7, wrote 0-7  (table+0)\n      thread 20 (core 1): read 8-15, wrote 8-15  (table+8)\n");
    }

    @Test
    void oneThreadMovesNoLine() throws Exception {
        for (int i = 0; i < 100; i++) access(1, 0x5000 + 8 * (i % 16), 8, i % 2 == 0);
        assertThat(sim.verdicts(10)).isEmpty();
        StringWriter text = new StringWriter();
        sim.writeTo(new CacheSimulation.Output(new PrintWriter(text), null, 10, "t", "lru", 1));
        sim.finish(Ending.offline(100, 100, 0, Map.of()));
        assertThat(text.toString()).contains("no line moved between cores");
    }
}
