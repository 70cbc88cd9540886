package org.memtrace.madt;

import static org.assertj.core.api.Assertions.*;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.memtrace.analysis.Ending;
import org.memtrace.analysis.Interpretation;
import org.memtrace.event.Event;
import org.memtrace.event.Event.AllocFunction;
import org.memtrace.trace.InstructionShapes;
import org.memtrace.trace.Naming;

class MadtWriterTest {
    static final int TID = 1234;

    /** Names blocks like the heap package will: a counter and a fixed call site; renames freed blocks. */
    static class FakeNaming implements Naming {
        final Map<Long, String> blocks = new HashMap<>();
        int counter;

        @Override
        public void observe(Event event) {
            if (!(event instanceof Event.Alloc a)) return;
            switch (a.function()) {
                case FREE -> blocks.computeIfPresent(a.arg(0), (k, v) -> "<freed:" + v.substring(v.indexOf('0')));
                case REALLOC, REALLOCARRAY, MREMAP -> {
                    blocks.remove(a.arg(0));
                    blocks.put(a.result(), String.format("<%s%04d@main+5>", a.function() == AllocFunction.MREMAP ? "mremap" : "realloc", ++counter));
                }
                case MUNMAP -> blocks.computeIfPresent(a.arg(0), (k, v) -> "<unmap:" + v.substring(v.indexOf('0')));
                default -> blocks.put(a.result(), String.format("<%s%04d@main+5>", a.function() == AllocFunction.MMAP ? "memmap"
                        : a.function() == AllocFunction.CALLOC ? "calloc" : "malloc", ++counter));
            }
        }

        @Override
        public String region(long address) { return address >= 0x500000 ? "[heap]" : "prog"; }

        @Override
        public String data(long address) {
            for (var e : blocks.entrySet())
                if (address >= e.getKey() && address < e.getKey() + 0x1000) return e.getValue() + "+" + (address - e.getKey());
            return "table+" + (address - 0x404000);
        }

        @Override
        public String code(long ip) { return "main+" + (ip - 0x401000); }

        @Override
        public String block(Event.Alloc a) {
            long at = a.function() == AllocFunction.FREE || a.function() == AllocFunction.MUNMAP ? a.arg(0) : a.result();
            return blocks.getOrDefault(at, "?");
        }
    }

    static InstructionShapes shapes(Map<Long, InstructionShapes.Shape> known) {
        return ip -> known.getOrDefault(ip, InstructionShapes.Shape.UNKNOWN);
    }

    static List<String> write(AddressMode mode, InstructionShapes shapes, Event... events) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        FakeNaming naming = new FakeNaming();
        var writer = new MadtWriter(out, mode, naming, p -> { throw new AssertionError(p); });
        run(naming, shapes, writer, events);
        return out.toString(StandardCharsets.UTF_8).lines().toList();
    }

    /** The writer as memtrace runs it: behind the interpretation stage. */
    static void run(Naming naming, InstructionShapes shapes, MadtWriter writer, Event... events) {
        Interpretation stage = new Interpretation(naming, shapes, List.of(writer));
        for (Event e : events) stage.accept(e);
        assertThat(stage.finish(Ending.offline(events.length, stage.events(), 0, Map.of()))).isEmpty();
    }

    static List<String> write(AddressMode mode, Event... events) { return write(mode, InstructionShapes.UNKNOWN, events); }

    static Event.Alloc alloc(AllocFunction f, long result, long... args) {
        long[] a = new long[6];
        System.arraycopy(args, 0, a, 0, args.length);
        return new Event.Alloc(TID, f, 0x401005, result, 0, a);
    }

    @Test
    void loadsAndStoresKeepThePapersFirstThreeFields() {
        Event load = new Event.Access(TID, 0x401049, 0x500008, false, false);
        Event store = new Event.Access(TID, 0x40107f, 0x404028, true, false);
        assertThat(write(AddressMode.RAW, load, store)).containsExactly(
                "L#0:0x500008,[heap],0x401049,0,1234",
                "S#1:0x404028,prog,0x40107f,0,1234");
        assertThat(write(AddressMode.SYMBOLIC, alloc(AllocFunction.MALLOC, 0x500000, 528), load, store)).containsExactly(
                "M$0:<malloc0001@main+5>,528,1234",
                "L$1:<malloc0001@main+5>+8,[heap],main+73,0,1234",
                "S$2:table+40,prog,main+127,0,1234");
        assertThat(write(AddressMode.BOTH, load)).containsExactly(
                "L#0:0x500008,[heap],0x401049,0,1234",
                "L$0:table+1032200,[heap],main+73,0,1234");
    }

    static Event.ProbeSite site(long ip, Event.ProbeKind kind, int size, int flags, int weightMa, int weightAia) {
        return new Event.ProbeSite(ip, kind, size, 0, flags, weightMa, weightAia, 0, 0, 0, Event.SelectionTotals.NONE);
    }

    @Test
    void probesPrintTheSitesSizeAndKindAndAModifyIsALoadThenAStore() {
        List<String> lines = write(AddressMode.BOTH,
                new Event.Probe(TID, 0x404008, site(0x401010, Event.ProbeKind.LOAD, 4, 0, 1, 1)),
                new Event.Probe(TID, 0x404010, site(0x401020, Event.ProbeKind.MODIFY, 8, 0, 1, 1)),
                new Event.Block(TID, Event.BlockOp.COPY, false, 0x401030, 0x404000, 0x404100, 64, Event.BlockFunction.REP_MOVS.code));
        assertThat(lines).containsExactly(
                "L#0:0x404008,prog,0x401010,4,1234",
                "L$0:table+8,prog,main+16,4,1234",
                "L#1:0x404010,prog,0x401020,8,1234",
                "L$1:table+16,prog,main+32,8,1234",
                "S#2:0x404010,prog,0x401020,8,1234",
                "S$2:table+16,prog,main+32,8,1234",
                "Y#3:0x404000,prog,0x404100,prog,64,0x401030,1234,rep_movs",
                "Y$3:table+0,prog,table+256,prog,64,main+48,1234,rep_movs");
        lines.forEach(l -> assertThat(org.memtrace.testutil.MadtGrammar.check(l)).as(l).isNull());
    }

    @Test
    void aBlockFreedAndAllocatedAgainAtTheSameAddressGetsEachNameInTurn() {
        Event.ProbeSite load = site(0x401010, Event.ProbeKind.LOAD, 8, 0, 1, 1);
        List<String> lines = write(AddressMode.SYMBOLIC,
                alloc(AllocFunction.MALLOC, 0x500000, 64), new Event.Probe(TID, 0x500008, load),
                alloc(AllocFunction.FREE, 0, 0x500000), new Event.Probe(TID, 0x500008, load),
                alloc(AllocFunction.MALLOC, 0x500000, 64), new Event.Probe(TID, 0x500008, load), new Event.Probe(TID, 0x500010, load));
        assertThat(lines).containsExactly(
                "M$0:<malloc0001@main+5>,64,1234",
                "L$1:<malloc0001@main+5>+8,[heap],main+16,8,1234",
                "F$2:<freed:0001@main+5>,1234",
                "L$3:<freed:0001@main+5>+8,[heap],main+16,8,1234",
                "M$4:<malloc0002@main+5>,64,1234",
                "L$5:<malloc0002@main+5>+8,[heap],main+16,8,1234",
                "L$6:<malloc0002@main+5>+16,[heap],main+16,8,1234");
    }

    /** Data names of every shape the writer takes apart, over far more addresses than it keeps names for. */
    @Test
    void dataNamesAreTheEscapedNamesWhateverTheirCacheHolds() {
        FakeNaming naming = new FakeNaming() {
            @Override
            public String data(long address) {
                long off = address - 0x404000;
                return switch ((int) (off % 6)) {
                    case 0 -> "tab le,%" + (off % 7) + "+" + off; // a base to escape
                    case 1 -> "0x" + Long.toHexString(address); // digits without a '+'
                    case 2 -> "x+y" + (off % 3); // a '+' without digits after it
                    case 3 -> "+" + off; // no base
                    case 4 -> "é" + (off % 11) + "+" + off; // UTF-8
                    default -> super.data(address);
                };
            }
        };
        Event.ProbeSite load = site(0x401010, Event.ProbeKind.LOAD, 8, 0, 1, 1);
        java.util.Random random = new java.util.Random(10);
        int n = 60_000;
        Event[] events = new Event[n];
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            // a few addresses again and again (cache hits), the rest spread wide (misses and evictions)
            long address = 0x404000 + (random.nextInt(4) == 0 ? random.nextInt(16) : random.nextInt(1 << 20));
            events[i] = new Event.Probe(TID, address, load);
            expected.add("L$" + i + ":" + MadtWriter.field(naming.data(address)) + "," + naming.region(address) + ",main+16,8,1234");
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        var writer = new MadtWriter(out, AddressMode.SYMBOLIC, naming, p -> { throw new AssertionError(p); });
        run(naming, InstructionShapes.UNKNOWN, writer, events);
        assertThat(out.toString(StandardCharsets.UTF_8).lines().toList()).isEqualTo(expected);
    }

    @Test
    void probesOfASelectiveBuildCarryTheirModesWeight() {
        List<String> lines = write(AddressMode.SYMBOLIC,
                new Event.Probe(TID, 0x404008, site(0x401010, Event.ProbeKind.STORE, 4, 0x04, 3, 5)),
                new Event.Probe(TID, 0x404008, site(0x401010, Event.ProbeKind.LOAD, 4, 0x08, 3, 5)),
                new Event.Probe(TID, 0x404008, site(0x401010, Event.ProbeKind.LOAD, 4, 0x04, 0, 0)));
        assertThat(lines).containsExactly(
                "S$0:table+8,prog,main+16,4,1234,3",
                "L$1:table+8,prog,main+16,4,1234,5",
                "L$2:table+8,prog,main+16,4,1234,0");
        lines.forEach(l -> assertThat(org.memtrace.testutil.MadtGrammar.check(l)).as(l).isNull());
    }

    @Test
    void accessSizeComesFromTheInstructionShape() {
        var known = Map.of(0x401049L, new InstructionShapes.Shape(4, false));
        assertThat(write(AddressMode.RAW, shapes(known), new Event.Access(TID, 0x401049, 0x404000, false, false)))
                .containsExactly("L#0:0x404000,prog,0x401049,4,1234");
    }

    @Test
    void readModifyWriteIsALoadThenAStore() {
        var known = Map.of(0x401010L, new InstructionShapes.Shape(8, true));
        assertThat(write(AddressMode.RAW, shapes(known),
                new Event.Access(TID, 0x401010, 0x404010, true, false),
                // Some CPUs fault again for the write half: it is the same access.
                new Event.Access(TID, 0x401010, 0x404010, true, true),
                new Event.Access(TID, 0x401020, 0x404018, true, false)))
                .containsExactly(
                        "L#0:0x404010,prog,0x401010,8,1234",
                        "S#1:0x404010,prog,0x401010,8,1234",
                        "S#2:0x404018,prog,0x401020,0,1234");
    }

    @Test
    void secondHalfOfAPageStraddlingAccessIsMerged() {
        var known = Map.of(0x401010L, new InstructionShapes.Shape(8, false));
        assertThat(write(AddressMode.RAW, shapes(known),
                new Event.Access(TID, 0x401010, 0x404ffc, false, false),
                new Event.Access(TID, 0x401010, 0x405000, false, true)))
                .containsExactly("L#0:0x404ffc,prog,0x401010,8,1234");
    }

    @Test
    void sameStepFaultsThatAreNotAStraddleAreKept() {
        var known = Map.of(0x401010L, new InstructionShapes.Shape(4, false));
        // ends before the boundary: a second operand (movs), not the same access
        assertThat(write(AddressMode.RAW, shapes(known),
                new Event.Access(TID, 0x401010, 0x404ff0, false, false),
                new Event.Access(TID, 0x401010, 0x405000, true, true))).hasSize(2);
        // unknown size: never merged
        assertThat(write(AddressMode.RAW,
                new Event.Access(TID, 0x401010, 0x404ffc, false, false),
                new Event.Access(TID, 0x401010, 0x405000, false, true))).hasSize(2);
        // another thread's fault between them does not break the pairing, another tid does not pair
        assertThat(write(AddressMode.RAW, shapes(Map.of(0x401010L, new InstructionShapes.Shape(8, false))),
                new Event.Access(TID, 0x401010, 0x404ffc, false, false),
                new Event.Access(99, 0x401010, 0x405000, false, true),
                new Event.Access(TID, 0x401010, 0x405000, false, true)))
                .containsExactly("L#0:0x404ffc,prog,0x401010,8,1234", "L#1:0x405000,prog,0x401010,8,99");
    }

    @Test
    void blockOperations() {
        Event copy = new Event.Block(TID, Event.BlockOp.COPY, false, 0x401100, 0x500010, 0x404000, 64, 1);
        Event set = new Event.Block(TID, Event.BlockOp.STORE, false, 0x401110, 0x500010, 0, 32, 3);
        Event read = new Event.Block(TID, Event.BlockOp.STORE, true, 0x401120, 0x500010, 0, 12, 0);
        Event write = new Event.Block(TID, Event.BlockOp.FETCH, true, 0x401130, 0, 0x500010, 12, 1);
        Event odd = new Event.Block(TID, Event.BlockOp.FETCH, true, 0x401130, 0, 0x500010, 1, 999);
        assertThat(write(AddressMode.RAW, copy, set, read, write, odd)).containsExactly(
                "Y#0:0x500010,[heap],0x404000,prog,64,0x401100,1234,memcpy",
                "W#1:0x500010,[heap],32,0x401110,1234,memset",
                "W#2:0x500010,[heap],12,0x401120,1234,read",
                "G#3:0x500010,[heap],12,0x401130,1234,write",
                "G#4:0x500010,[heap],1,0x401130,1234,syscall999");
        assertThat(write(AddressMode.SYMBOLIC, copy)).containsExactly(
                "Y$0:table+1032208,[heap],table+0,prog,64,main+256,1234,memcpy");
    }

    @Test
    void allocationLinesFollowListing2() {
        List<String> lines = write(AddressMode.BOTH,
                alloc(AllocFunction.MALLOC, 0x500000, 528),
                alloc(AllocFunction.CALLOC, 0x600000, 10, 8),
                alloc(AllocFunction.REALLOC, 0x700000, 0x500000, 1000),
                alloc(AllocFunction.FREE, 0, 0x700000),
                alloc(AllocFunction.FREE, 0, 0),
                alloc(AllocFunction.MMAP, 0x7f0000000000L, 0, 8192, 3, 0x22, -1, 0),
                alloc(AllocFunction.MREMAP, 0x7f0000100000L, 0x7f0000000000L, 8192, 16384, 1, 0),
                alloc(AllocFunction.MUNMAP, 0, 0x7f0000100000L, 16384),
                alloc(AllocFunction.POSIX_MEMALIGN, 0x800000, 0x7ffc0000, 64, 100),
                alloc(AllocFunction.ALIGNED_ALLOC, 0x900000, 64, 128),
                alloc(AllocFunction.REALLOCARRAY, 0xa00000, 0, 4, 10),
                alloc(AllocFunction.MALLOC, 0, -1),
                alloc(AllocFunction.MMAP, -1, 0, 4096, 3, 0x22, -1, 0));
        assertThat(lines).containsExactly(
                "M#0:0x500000,528,1234", "M$0:<malloc0001@main+5>,528,1234",
                "C#1:0x600000,80,1234", "C$1:<calloc0002@main+5>,80,1234",
                "R#2:0x700000,1000,0x500000,1234", "R$2:<realloc0003@main+5>,1000,<malloc0001@main+5>,1234",
                "F#3:0x700000,1234", "F$3:<freed:0003@main+5>,1234",
                "P#4:0x7f0000000000,8192,1234", "P$4:<memmap0004@main+5>,8192,1234",
                "E#5:0x7f0000100000,16384,0x7f0000000000,1234", "E$5:<mremap0005@main+5>,16384,<memmap0004@main+5>,1234",
                "U#6:0x7f0000100000,16384,1234", "U$6:<unmap:0005@main+5>,16384,1234",
                "M#7:0x800000,100,1234", "M$7:<malloc0006@main+5>,100,1234",
                "M#8:0x900000,128,1234", "M$8:<malloc0007@main+5>,128,1234",
                "R#9:0xa00000,40,0x0,1234", "R$9:<realloc0008@main+5>,40,0x0,1234",
                "M#10:0x0,18446744073709551615,1234", "M$10:0x0,18446744073709551615,1234",
                "P#11:0xffffffffffffffff,4096,1234", "P$11:0xffffffffffffffff,4096,1234");
    }

    @Test
    void eventsOutsideTableIAreCommentsWithoutNumbers() {
        assertThat(write(AddressMode.RAW,
                new Event.Hello(1, 1, 4096, 0, 0, 15),
                new Event.ThreadEvent(1235, true, 1234),
                new Event.Control(1234, true, 0),
                new Event.Access(TID, 0x401049, 0x500008, false, false),
                new Event.Control(1234, false, 0x401200),
                new Event.ThreadEvent(1235, false, 0),
                new Event.Fork(1234, 4321),
                new Event.Module(1234, 0x7f0000000000L, new byte[] {(byte) 0xab, 1}, "/lib/libc.so.6"),
                new Event.Mapping(1234, 0x404000, 0x405000, 0x3000, 3, true, "/tmp/prog"),
                new Event.Range(1234, true, 0x405000, 0x426000, Event.RegionKind.HEAP, 3),
                new Event.Stats(1234, 5, 5, 1, 0, 2),
                new Event.Exit(1234, Event.ExitKind.SIGNAL, 11, 0x401300, 0, "")))
                .containsExactly(
                        "# agent pid=1 page-size=4096 regions=15",
                        "# thread 1235 start parent=1234",
                        "# start tid=1234",
                        "L#0:0x500008,[heap],0x401049,0,1234",
                        "# stop tid=1234 caller=0x401200",
                        "# thread 1235 exit code=0",
                        "# fork tid=1234 child=4321 (untraced)",
                        "# module /lib/libc.so.6 bias=0x7f0000000000 build-id=ab01",
                        "# mapping 0x404000-0x405000 rw- offset=0x3000 traced /tmp/prog",
                        "# traced heap 0x405000-0x426000 rw-",
                        "# stats faults=5 steps=5 syscalls=1 windows-at-risk=0 untraced-faults=2",
                        "# fatal signal 11 (SIGSEGV) ip=0x401300 addr=0x0 tid=1234");
        assertThat(write(AddressMode.SYMBOLIC, new Event.Exit(1, Event.ExitKind.NORMAL, 3, 0, 0, ""),
                new Event.Exit(1, Event.ExitKind.EXEC, 0, 0, 0, "/bin/true")))
                .containsExactly("# exit status=3 tid=1", "# exec /bin/true tid=1");
    }

    @Test
    void aWriteErrorStopsTheTraceOnceAndIsReported() {
        List<String> problems = new ArrayList<>();
        OutputStream broken = new OutputStream() {
            int writes;
            @Override public void write(int b) { throw new AssertionError("written byte by byte"); }
            @Override public void write(byte[] b, int o, int l) throws IOException {
                if (++writes > 1) throw new IOException("No space left on device");
            }
            @Override public void close() throws IOException { throw new IOException("No space left on device"); }
        };
        var writer = new MadtWriter(broken, AddressMode.RAW, new FakeNaming(), problems::add);
        // enough lines for several chunks: the second chunk's write fails mid-trace
        Event[] accesses = new Event[20_000];
        java.util.Arrays.fill(accesses, new Event.Access(1, 1, 2, false, false));
        run(new FakeNaming(), InstructionShapes.UNKNOWN, writer, accesses);
        assertThat(writer.complete()).isFalse();
        assertThat(problems).singleElement().asString().contains("No space left on device");
    }

    /**
     * The text writer's thread (LinePipe) changes no byte: a stream of several batches' lines, accesses of
     * blocks that are freed and reallocated between them, comments and allocation lines among them, in each
     * address mode, gives the same bytes whether the lines are made on the stage's thread or on the writer's.
     */
    @Test
    void theWritersThreadWritesTheSameBytesAsTheStagesThread() {
        java.util.Random random = new java.util.Random(22);
        Event.ProbeSite load = site(0x401010, Event.ProbeKind.LOAD, 8, 0, 1, 1);
        Event.ProbeSite modify = site(0x401020, Event.ProbeKind.MODIFY, 4, 0x04, 3, 5);
        List<Event> events = new ArrayList<>();
        for (int i = 0; i < 3 * LinePipe.BATCH + 17; i++) {
            int pick = random.nextInt(100);
            long block = 0x500000 + 0x1000L * random.nextInt(8);
            if (pick < 2) events.add(alloc(AllocFunction.MALLOC, block, 64 + pick));
            else if (pick < 3) events.add(alloc(AllocFunction.FREE, 0, block));
            else if (pick < 4) events.add(new Event.ThreadEvent(TID + 1, true, TID));
            else if (pick < 40) events.add(new Event.Probe(TID + pick % 3, block + random.nextInt(64), modify));
            else if (pick < 70) events.add(new Event.Probe(TID, 0x404000 + random.nextInt(1 << 16), load));
            else events.add(new Event.Access(TID, 0x401049 + pick, 0x404000 + random.nextInt(256), pick % 2 == 0, false));
        }
        Event[] all = events.toArray(Event[]::new);
        for (AddressMode mode : AddressMode.values()) {
            byte[][] texts = new byte[2][];
            for (int threaded = 0; threaded < 2; threaded++) {
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                FakeNaming naming = new FakeNaming();
                run(naming, InstructionShapes.UNKNOWN, new MadtWriter(out, mode, naming, p -> { throw new AssertionError(p); }, threaded == 1), all);
                texts[threaded] = out.toByteArray();
            }
            assertThat(new String(texts[0], StandardCharsets.UTF_8).lines().count()).as(mode.name()).isGreaterThan(3 * LinePipe.BATCH);
            assertThat(texts[1]).as(mode.name()).isEqualTo(texts[0]);
        }
    }

    @Test
    void aWriteErrorIsReportedOnceOnEitherThread() {
        for (boolean threaded : new boolean[] {false, true}) {
            List<String> problems = new ArrayList<>();
            OutputStream broken = new OutputStream() {
                @Override public void write(int b) throws IOException { throw new IOException("Broken pipe"); }
                @Override public void write(byte[] b, int o, int l) throws IOException { throw new IOException("Broken pipe"); }
            };
            var writer = new MadtWriter(broken, AddressMode.SYMBOLIC, new FakeNaming(), problems::add, threaded);
            Event[] accesses = new Event[4 * LinePipe.BATCH];
            java.util.Arrays.fill(accesses, new Event.Access(1, 1, 2, false, false));
            run(new FakeNaming(), InstructionShapes.UNKNOWN, writer, accesses);
            assertThat(writer.complete()).as("threaded " + threaded).isFalse();
            assertThat(problems).as("threaded " + threaded).singleElement().asString().contains("Broken pipe");
        }
    }

    @Test
    void namesAreEscapedSoThatNoNameSplitsAFieldOrALine() {
        assertThat(MadtWriter.field("we,ird file.dat")).isEqualTo("we%2Cird%20file.dat");
        assertThat(MadtWriter.field("100%\tdone\n")).isEqualTo("100%25%09done%0A");
        assertThat(MadtWriter.field("std::map<int,%20int>")).isEqualTo("std::map<int%2C%2520int>");
        assertThat(MadtWriter.field("plain+12")).isEqualTo("plain+12");
        assertThat(MadtWriter.field("über+3")).isEqualTo("über+3");
        var mapping = new Event.Mapping(TID, 0x7f0000000000L, 0x7f0000001000L, 0, 1, true, "/tmp/we,ird file.dat");
        var exec = new Event.Exit(TID, Event.ExitKind.EXEC, 0, 0x401000, 0, "./d,1 x");
        var failed = new Event.Exit(TID, Event.ExitKind.EXEC_FAILED, 2, 0x401000, 0, "./d,1 x");
        List<String> lines = write(AddressMode.SYMBOLIC, mapping, exec, failed);
        assertThat(lines).containsExactly(
                "# mapping 0x7f0000000000-0x7f0000001000 r-- offset=0x0 traced /tmp/we%2Cird%20file.dat",
                "# exec ./d%2C1%20x tid=1234",
                "# exec-failed ./d%2C1%20x errno=2 tid=1234");
        lines.forEach(l -> assertThat(org.memtrace.testutil.MadtGrammar.check(l)).as(l).isNull());
    }

    @Test
    void aReleaseOfABlockTheNamingNeverSawPrintsItsAddress() {
        Naming unknown = new FakeNaming() {
            @Override
            public String block(Event.Alloc a) { return Naming.NO_BLOCK; }
        };
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        var writer = new MadtWriter(out, AddressMode.SYMBOLIC, unknown, p -> { throw new AssertionError(p); });
        run(unknown, InstructionShapes.UNKNOWN, writer, alloc(AllocFunction.FREE, 0, 0x4052a0));
        assertThat(out.toString(StandardCharsets.UTF_8).lines()).containsExactly("F$0:0x4052a0,1234");
        assertThat(org.memtrace.testutil.MadtGrammar.check("F$0:(nil),1234")).isNotNull();
    }
}
