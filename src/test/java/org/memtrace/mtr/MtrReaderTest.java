package org.memtrace.mtr;

import static org.assertj.core.api.Assertions.*;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.memtrace.event.Event;
import org.memtrace.event.TestRecords;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfSymbol;
import org.memtrace.testutil.Gcc;
import org.memtrace.testutil.MtrWriter;
import org.memtrace.testutil.MtrWriter.Slots;

/** The reader's events for .mtr files against the sites.c fixture's table: order, rep blocks, damage inside a thread. */
class MtrReaderTest {
    @TempDir Path dir;
    Path program;
    Map<String, Long> sym = new HashMap<>();

    @BeforeEach
    void build() throws Exception {
        program = Gcc.compile(dir, "sites.c", "sites", "-no-pie");
        for (ElfSymbol s : ElfFile.read(program).symtab()) sym.put(s.name(), s.value());
    }

    record Read(List<Event> events, MtrReader.Result result) {}

    Read read(MtrWriter w) throws Exception {
        List<Event> events = new ArrayList<>();
        try (MtrFile f = MtrFile.open(w.write(dir.resolve("t.mtr")))) {
            return new Read(events, MtrReader.read(f, events::add));
        }
    }

    byte[] module() { return TestRecords.module(1, 0, new byte[0], program.toString()); }

    @Test
    void theOpcodeNamesTheRepOperation() {
        int dst = 1 << SiteTable.KIND_REP_DESTINATION, src = 1 << SiteTable.KIND_REP_SOURCE, count = 1 << SiteTable.KIND_REP_COUNT;
        assertThat(LinkedCode.repOp(code(0xf3, 0xa4), dst | src | count)).isEqualTo(SiteTable.RepOp.MOVS);
        assertThat(LinkedCode.repOp(code(0xf3, 0x48, 0xab), dst | count)).isEqualTo(SiteTable.RepOp.STOS);
        assertThat(LinkedCode.repOp(code(0xf3, 0x66, 0xad), src | count)).isEqualTo(SiteTable.RepOp.LODS);
        assertThat(LinkedCode.repOp(code(0xf3, 0xa6), dst | src | count)).isEqualTo(SiteTable.RepOp.CMPS);
        assertThat(LinkedCode.repOp(code(0xf2, 0xae), dst | count)).isEqualTo(SiteTable.RepOp.SCAS);
        // Without the code bytes, the operands recorded decide.
        assertThat(LinkedCode.repOp(code(), dst | count)).isEqualTo(SiteTable.RepOp.STOS);
        assertThat(LinkedCode.repOp(code(), src | count)).isEqualTo(SiteTable.RepOp.LODS);
    }

    @Test
    void aFlag40SiteIsKeptOnlyWhereTheLinkedBytesStillDoItsAccess() {
        int load = SiteTable.KIND_LOAD, push = SiteTable.KIND_STORE;
        // mov 0x2ec9(%rip),%rax: a GOT load the linker kept
        assertThat(LinkedCode.stillAccesses(load, code(0x48, 0x8b, 0x05, 0xc9, 0x2e, 0, 0))).isTrue();
        assertThat(LinkedCode.stillAccesses(load, code(0x4c, 0x8b, 0x1d, 0xc9, 0x2e, 0, 0))).isTrue();
        // relaxed: lea 0x2ec9(%rip),%rax, mov $imm,%rax; a load through a register is no GOT load
        assertThat(LinkedCode.stillAccesses(load, code(0x48, 0x8d, 0x05, 0xc9, 0x2e, 0, 0))).isFalse();
        assertThat(LinkedCode.stillAccesses(load, code(0x48, 0xc7, 0xc0, 0x10, 0x11, 0, 0))).isFalse();
        assertThat(LinkedCode.stillAccesses(load, code(0x48, 0x8b, 0x00))).isFalse();
        // -fno-plt: call/jmp *f@GOTPCREL(%rip) kept, or relaxed into addr32 call / jmp rel32; call *%rax reads nothing
        assertThat(LinkedCode.stillAccesses(load, code(0xff, 0x15, 0xc9, 0x2e, 0, 0))).isTrue();
        assertThat(LinkedCode.stillAccesses(load, code(0xff, 0x25, 0xc9, 0x2e, 0, 0))).isTrue();
        assertThat(LinkedCode.stillAccesses(load, code(0x67, 0xe8, 0xc9, 0x2e, 0, 0))).isFalse();
        assertThat(LinkedCode.stillAccesses(load, code(0xe9, 0xc9, 0x2e, 0, 0, 0x90))).isFalse();
        assertThat(LinkedCode.stillAccesses(load, code(0xff, 0xd0))).isFalse();
        // a TLS resolver push: data16 data16 rex.W call, kept; relaxed into mov %fs:0,%rax, gone
        assertThat(LinkedCode.stillAccesses(push, code(0x66, 0x66, 0x48, 0xe8, 0, 0, 0, 0))).isTrue();
        assertThat(LinkedCode.stillAccesses(push, code(0x64, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0))).isFalse();
    }

    static ByteBuffer code(int... bytes) {
        ByteBuffer b = ByteBuffer.allocate(bytes.length);
        for (int x : bytes) b.put((byte) x);
        return b.flip();
    }

    @Test
    void aThreadWithoutEventsIsDeliveredAfterTheOthersAndAZeroCountRepPrintsNothing() throws Exception {
        Read r = read(new MtrWriter(1)
                .chunk(2, new Slots().access(sym.get("table"), sym.get("mt_s1"))
                        .access(sym.get("big"), sym.get("mt_s7")).access(0, sym.get("mt_s8")), true)
                .chunk(1, new Slots().event(0, module()).access(sym.get("big"), sym.get("mt_s2"))
                        .event(1, TestRecords.exit(1, 1, 0, 0, 0, "")), true)
                .end(0));
        assertThat(r.result().complete()).isTrue();
        assertThat(r.result().probes()).isEqualTo(4);
        assertThat(r.events()).extracting(e -> e.getClass().getSimpleName() + "/" + e.tid())
                .containsExactly("Module/1", "Probe/1", "Exit/1", "Probe/2");
        Event.Probe p = (Event.Probe) r.events().get(1);
        assertThat(p.ip()).isEqualTo(sym.get("mt_i2"));
        assertThat(p.kind()).isEqualTo(Event.ProbeKind.STORE);
        assertThat(p.size()).isEqualTo(8);
    }

    @Test
    void aRepInstructionIsOneBlockOfCountTimesElementSize() throws Exception {
        Read r = read(new MtrWriter(1)
                .chunk(1, new Slots().event(0, module())
                        .access(sym.get("big") + 8, sym.get("mt_s7")).access(3, sym.get("mt_s8"))
                        .access(sym.get("big"), sym.get("mt_s4")).access(sym.get("table"), sym.get("mt_s5")).access(5, sym.get("mt_s6"))
                        .event(1, TestRecords.exit(1, 1, 0, 0, 0, "")), false)
                .end(0));
        assertThat(r.events()).filteredOn(e -> e instanceof Event.Block).containsExactly(
                new Event.Block(1, Event.BlockOp.STORE, false, sym.get("mt_i5"), sym.get("big") + 8, 0, 24, Event.BlockFunction.REP_STOS.code),
                new Event.Block(1, Event.BlockOp.COPY, false, sym.get("mt_i4"), sym.get("big"), sym.get("table"), 5, Event.BlockFunction.REP_MOVS.code));
    }

    @Test
    void anUnknownTagEndsItsThreadAndSaysWhere() throws Exception {
        Read r = read(new MtrWriter(1)
                .chunk(1, new Slots().event(0, module()).access(sym.get("table"), sym.get("mt_s1"))
                        .slot(0, 1L << 63 | 7).access(sym.get("table"), sym.get("mt_s1")), true)
                .end(0));
        assertThat(r.events()).hasSize(2);
        assertThat(r.result().complete()).isFalse();
        assertThat(r.result().problems()).containsExactly("thread 1, chunk 0: unknown tag type 7; the rest of this thread's trace is lost");
    }

    /**
     * Chunks decoded ahead of the reader (MtrReader's decoder threads): two threads' chunks interleaved, each
     * thread's in order, and a damaged chunk of thread 1 ends that thread there, with every access before it
     * delivered and thread 2 read whole.
     */
    @Test
    void chunksDecodedAheadKeepTheirOrderAndADamagedOneEndsItsThreadThere() throws Exception {
        long table = sym.get("table");
        MtrWriter w = new MtrWriter(1).chunk(1, new Slots().event(0, module()), true);
        for (int c = 0; c < 6; c++) {
            w.chunk(1, new Slots().access(table + 10 * c, sym.get("mt_s1")).access(table + 10 * c + 1, sym.get("mt_s1")), c % 2 == 0);
            w.chunk(2, new Slots().access(table + 100 + c, sym.get("mt_s1")), true);
        }
        w.chunk(1, new byte[] {1, 2, 3, 4, 5, 6, 7, 8}, 32, MtrFile.CODEC_ZSTD)
                .chunk(1, new Slots().access(table + 99, sym.get("mt_s1")), true)
                .chunk(2, new Slots().access(table + 200, sym.get("mt_s1")), true)
                .end(0);
        Read r = read(w);
        List<Long> one = new ArrayList<>(), two = new ArrayList<>();
        for (Event e : r.events()) if (e instanceof Event.Probe p) (p.tid() == 1 ? one : two).add(p.address() - table);
        assertThat(one).containsExactly(0L, 1L, 10L, 11L, 20L, 21L, 30L, 31L, 40L, 41L, 50L, 51L);
        assertThat(two).containsExactly(100L, 101L, 102L, 103L, 104L, 105L, 200L);
        assertThat(r.result().problems()).singleElement().asString()
                .startsWith("thread 1, chunk 13: zstd: ").endsWith("; the rest of this thread's trace is lost");
    }

    /** Many threads decode fewer chunks ahead (two each up to 16 threads, one up to 32, none past): each thread's accesses still come whole and in order. */
    @ParameterizedTest
    @ValueSource(ints = {3, 20, 40})
    void everyThreadsChunksComeInOrderWhateverTheThreadCount(int threads) throws Exception {
        long table = sym.get("table");
        MtrWriter w = new MtrWriter(1).chunk(1, new Slots().event(0, module()), true);
        for (int c = 0; c < 4; c++)
            for (int t = 1; t <= threads; t++) w.chunk(t, new Slots().access(table + 1000L * t + c, sym.get("mt_s1")), c % 2 == 1);
        Read r = read(w.end(0));
        assertThat(r.result().complete()).as("%s", r.result().problems()).isTrue();
        Map<Integer, List<Long>> seen = new HashMap<>();
        for (Event e : r.events()) if (e instanceof Event.Probe p) seen.computeIfAbsent(p.tid(), k -> new ArrayList<>()).add(p.address() - table);
        assertThat(seen).hasSize(threads);
        seen.forEach((t, offsets) -> assertThat(offsets).containsExactly(1000L * t, 1000L * t + 1, 1000L * t + 2, 1000L * t + 3));
    }

    /** One thread's accesses go out as they are read (nothing held): the first slot of each chunk keeps its place. */
    @Test
    void aSingleThreadsAccessesKeepTheirOrderAcrossChunks() throws Exception {
        long table = sym.get("table"), big = sym.get("big");
        Read r = read(new MtrWriter(1)
                .chunk(1, new Slots().event(0, module()).access(table, sym.get("mt_s1")), false)
                .chunk(1, new Slots().access(big, sym.get("mt_s2")).access(table + 8, sym.get("mt_s3")), true)
                .chunk(1, new Slots().access(big + 8, sym.get("mt_s2")).event(1, TestRecords.exit(1, 1, 0, 0, 0, ""))
                        .access(table + 4, sym.get("mt_s1")), false)
                .end(0));
        assertThat(r.result().complete()).isTrue();
        assertThat(r.events()).extracting(e -> e instanceof Event.Probe p ? p.address() - table : e.getClass().getSimpleName())
                .containsExactly("Module", 0L, big - table, 8L, big + 8 - table, "Exit", 4L);
    }
}
