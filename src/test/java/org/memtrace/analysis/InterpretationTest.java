package org.memtrace.analysis;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.memtrace.cache.CacheGeometry;
import org.memtrace.cache.CacheHierarchy;
import org.memtrace.cache.Policy;
import org.memtrace.event.Event;
import org.memtrace.export.TraceRows;
import org.memtrace.trace.InstructionShapes;
import org.memtrace.trace.Naming;

/** The step from events to analyses: numbering as the text trace, and names as they are at each access. */
class InterpretationTest {
    private static final long BLOCK = 0x5000_0000L;

    /** One heap block at BLOCK, named after the allocator call and renamed when freed, like SymbolicNaming. */
    private static final class OneBlock implements Naming {
        String name = null;

        @Override
        public void observe(Event event) {
            if (event instanceof Event.Alloc a)
                name = switch (a.function()) {
                    case MALLOC -> "<malloc0001@main+4>";
                    case FREE -> a.arg(0) == BLOCK ? "<freed:0001@main+4>" : name;
                    default -> name;
                };
        }

        @Override
        public String region(long address) { return "[heap]"; }

        @Override
        public String data(long address) {
            return name != null && address >= BLOCK && address < BLOCK + 4096 ? name + "+" + (address - BLOCK)
                    : "0x" + Long.toHexString(address);
        }

        @Override
        public String code(long ip) { return "main+" + (ip - 0x401000); }

        @Override
        public String block(Event.Alloc allocation) { return name; }
    }

    private static final List<Event> EVENTS = List.of(
            new Event.Alloc(9, Event.AllocFunction.MALLOC, 0x401004, BLOCK, 4096, new long[] {4096, 0, 0, 0, 0, 0}),
            new Event.Access(9, 0x401010, BLOCK + 8, false, false),
            new Event.Access(9, 0x401014, BLOCK + 8, true, false),
            new Event.Alloc(9, Event.AllocFunction.FREE, 0x401020, 0, 0, new long[] {0, 0, 0, 0, 0, 0}),
            new Event.Alloc(9, Event.AllocFunction.FREE, 0x401024, 0, 0, new long[] {BLOCK, 0, 0, 0, 0, 0}),
            new Event.Access(9, 0x401030, BLOCK + 8, false, false),
            new Event.Access(9, 0x401034, BLOCK + 200, false, false),
            new Event.Access(9, 0x401038, 0x10, false, false));

    @Test
    void rowsAreNumberedAsTheTextTraceAndNamedAsTheBlockIsAtThatMoment() throws Exception {
        OneBlock naming = new OneBlock();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        TraceRows rows = new TraceRows(naming, bytes);
        Interpretation in = new Interpretation(naming, InstructionShapes.UNKNOWN, List.of(rows));
        EVENTS.forEach(in::accept);
        assertThat(in.finish(Ending.offline(EVENTS.size(), in.events(), 0, Map.of()))).isEmpty();
        // free(NULL) prints no line, so it takes no number; the same address is named again after the free;
        // the naming knows no source lines, so the last field (source) is empty
        assertThat(bytes.toString(StandardCharsets.UTF_8).lines().skip(1).toList()).containsExactly(
                "1,L,false,1342177288,0,4198416,main+16,9,[heap],<malloc0001@main+4>,8,",
                "2,S,true,1342177288,0,4198420,main+20,9,[heap],<malloc0001@main+4>,8,",
                "4,L,false,1342177288,0,4198448,main+48,9,[heap],<freed:0001@main+4>,8,",
                "5,L,false,1342177480,0,4198452,main+52,9,[heap],<freed:0001@main+4>,200,",
                "6,L,false,16,0,4198456,main+56,9,[heap],,,");
        assertThat(in.events()).isEqualTo(7);
    }

    @Test
    void missesAreChargedToTheNameTheObjectHadWhenTheyHappened() {
        OneBlock naming = new OneBlock();
        // one line of cache: an access misses unless the access before it was to the same line, so after the
        // free BLOCK+8 hits (its line is still cached) and BLOCK+200 misses, charged to the released name
        CacheSimulation sim = new CacheSimulation(new CacheHierarchy(List.of(new CacheGeometry(64, 1, 64)), Policy.LRU, 1), naming);
        Interpretation in = new Interpretation(naming, InstructionShapes.UNKNOWN, List.of(sim));
        EVENTS.forEach(in::accept);
        assertThat(in.finish(Ending.offline(EVENTS.size(), in.events(), 0, Map.of()))).isEmpty();
        assertThat(sim.topObjects(10, false)).containsExactly(
                new CacheSimulation.Misses("<freed:0001@main+4>", 1, 1),
                new CacheSimulation.Misses("<malloc0001@main+4>", 1, 1),
                new CacheSimulation.Misses("[unknown]", 1, 1));
        assertThat(sim.topInstructions(10, false)).extracting(CacheSimulation.Misses::name)
                .containsExactly("main+16", "main+52", "main+56");
    }
}
