package org.memtrace.analysis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.memtrace.event.Event;
import org.memtrace.trace.InstructionShapes;
import org.memtrace.trace.Naming;

/** The interpretation stage: every analysis sees each access once, in order, named as the trace names it there. */
class StageTest {
    private static final long BLOCK = 0x5000_0000L;
    private static final long RMW_IP = 0x401040, WIDE_IP = 0x401050;

    /** One heap block at BLOCK; counts the data names it is asked for, so that the stage's cache shows. */
    private static final class CountingNaming implements Naming {
        String name;
        final Map<Long, Integer> dataCalls = new HashMap<>();

        @Override
        public void observe(Event event) {
            if (event instanceof Event.Alloc a)
                name = switch (a.function()) {
                    case MALLOC -> "<malloc0001@main+4>";
                    case REALLOC -> "<realloc0002@main+8>";
                    case FREE -> a.arg(0) == BLOCK ? "<freed:" + name.substring(name.indexOf('0')) : name;
                    default -> name;
                };
        }

        @Override
        public String region(long address) { return "[heap]"; }

        @Override
        public String data(long address) {
            dataCalls.merge(address, 1, Integer::sum);
            return name != null && address >= BLOCK && address < BLOCK + 4096 ? name + "+" + (address - BLOCK)
                    : "0x" + Long.toHexString(address);
        }

        @Override
        public String code(long ip) { return "main+" + (ip - 0x401000); }

        @Override
        public String block(Event.Alloc a) {
            return a.function() == Event.AllocFunction.FREE && a.arg(0) != BLOCK ? NO_BLOCK : name;
        }
    }

    /** Writes down every call it gets, with the names it asks for. */
    private static final class Recorder implements Analysis {
        final List<String> calls = new ArrayList<>();

        @Override
        public void event(Event event) { calls.add("event " + event.getClass().getSimpleName()); }

        @Override
        public void fault(int tid, long ip, long address, boolean write) { calls.add("fault"); }

        @Override
        public void access(Access a) {
            calls.add((a.store() ? "S" : "L") + a.sequence() + " " + a.data() + " " + a.code() + " size " + a.size());
        }

        @Override
        public void block(long sequence, Event.Block block) { calls.add("block " + sequence); }

        @Override
        public void namesChanged() { calls.add("names changed"); }

        @Override
        public void allocation(Allocation a) { calls.add("alloc " + a.sequence() + " " + a.block() + " was " + a.previous()); }

        @Override
        public void finish(Ending ending) { calls.add("finish " + ending.records() + " records, " + ending.events() + " events"); }
    }

    private static long[] args(long... first) {
        long[] six = new long[6];
        System.arraycopy(first, 0, six, 0, first.length);
        return six;
    }

    private static final List<Event> EVENTS = List.of(
            new Event.Hello(9, 77, 4096, 0, 0, 15),
            new Event.Alloc(9, Event.AllocFunction.MALLOC, 0x401004, BLOCK, 4096, args(4096)),
            new Event.Access(9, 0x401010, BLOCK + 8, false, false),
            new Event.Access(9, RMW_IP, BLOCK + 16, true, false),                 // add [m], r: a load and a store
            new Event.Access(9, WIDE_IP, BLOCK + 4092, false, false),             // 8 bytes over a page boundary ...
            new Event.Access(9, WIDE_IP, BLOCK + 4096, false, true),              // ... faults twice, is one load
            new Event.Alloc(9, Event.AllocFunction.REALLOC, 0x401008, BLOCK, 4096, args(BLOCK, 4096)),
            new Event.Block(9, Event.BlockOp.STORE, false, 0x401060, BLOCK, 0, 32, 2),
            new Event.Alloc(9, Event.AllocFunction.FREE, 0x401020, 0, 0, args(0)),
            new Event.Alloc(9, Event.AllocFunction.FREE, 0x401024, 0, 0, args(BLOCK)),
            new Event.Access(9, 0x401030, BLOCK + 8, false, false));

    private static final InstructionShapes SHAPES = ip -> ip == RMW_IP ? new InstructionShapes.Shape(4, true)
            : ip == WIDE_IP ? new InstructionShapes.Shape(8, false) : new InstructionShapes.Shape(4, false);

    private static List<String> run(Naming naming, Recorder... analyses) {
        Interpretation stage = new Interpretation(naming, SHAPES, List.of(analyses));
        EVENTS.forEach(stage::accept);
        assertThat(stage.finish(Ending.offline(stage.records(), stage.events(), 0, Map.of()))).isEmpty();
        return analyses[0].calls;
    }

    @Test
    void eachAccessArrivesOnceInOrderWithTheNamesOfThatMoment() {
        assertThat(run(new CountingNaming(), new Recorder())).containsExactly(
                "event Hello", "names changed",
                "event Alloc", "alloc 0 <malloc0001@main+4> was null",
                "fault", "L1 <malloc0001@main+4>+8 main+16 size 4",
                "fault", "L2 <malloc0001@main+4>+16 main+64 size 4", "S3 <malloc0001@main+4>+16 main+64 size 4",
                "fault", "L4 <malloc0001@main+4>+4092 main+80 size 8",
                "fault",
                // realloc names the old block as it was before the call, the new one after
                "event Alloc", "alloc 5 <realloc0002@main+8> was <malloc0001@main+4>+0",
                "event Block", "block 6",
                // free(NULL) prints no line and takes no number
                "event Alloc", "alloc -1 (nil) was null",
                "event Alloc", "alloc 7 <freed:0002@main+8> was null",
                "fault", "L8 <freed:0002@main+8>+8 main+48 size 4",
                "finish 11 records, 9 events");
    }

    @Test
    void anAnalysisSeesTheSameWhetherOrNotAnotherRanBeforeIt() {
        List<String> alone = run(new CountingNaming(), new Recorder());
        Recorder second = new Recorder();
        run(new CountingNaming(), new Recorder(), second);
        assertThat(second.calls).isEqualTo(alone);
    }

    @Test
    void namesAreResolvedOnceWhateverTheNumberOfAnalysesAsking() {
        CountingNaming naming = new CountingNaming();
        run(naming, new Recorder(), new Recorder(), new Recorder());
        // BLOCK+16 is named once for its load and store in three analyses; BLOCK+8 once before and once after
        // the names changed (the realloc and the free)
        assertThat(naming.dataCalls.get(BLOCK + 16)).isEqualTo(1);
        assertThat(naming.dataCalls.get(BLOCK + 8)).isEqualTo(2);
    }
}
