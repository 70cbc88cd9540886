package org.memtrace.analysis;

import static org.assertj.core.api.Assertions.*;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.memtrace.event.Event;
import org.memtrace.trace.InstructionShapes;

class SummaryTest {
    @Test
    void countsWhatTheTracePrints() {
        InstructionShapes shapes = ip -> ip == 0x10 ? new InstructionShapes.Shape(4, true) : new InstructionShapes.Shape(8, false);
        var s = new Summary(shapes);
        long[] none = new long[6];
        s.accept(new Event.Hello(1, 1, 4096, 0, 0, 15));
        s.accept(new Event.Mapping(1, 0x404000, 0x405000, 0, 3, true, "/p"));
        s.accept(new Event.Mapping(1, 0x400000, 0x401000, 0, 5, false, "/p"));
        s.accept(new Event.Range(1, true, 0x500000, 0x520000, Event.RegionKind.HEAP, 3));
        s.accept(new Event.Access(1, 0x10, 0x404000, true, false));           // RMW: load + store
        s.accept(new Event.Access(1, 0x20, 0x404ffc, false, false));          // straddle ...
        s.accept(new Event.Access(1, 0x20, 0x405000, false, true));           // ... second half not counted
        s.accept(new Event.Access(2, 0x30, 0x500000, true, false));
        s.accept(new Event.Block(1, Event.BlockOp.COPY, false, 0, 1, 2, 3, 1));
        s.accept(new Event.Block(1, Event.BlockOp.STORE, true, 0, 1, 0, 3, 0));
        s.accept(new Event.Block(1, Event.BlockOp.FETCH, true, 0, 0, 2, 3, 1));
        s.accept(new Event.Alloc(1, Event.AllocFunction.MALLOC, 0, 0x500000, 32, none));
        s.accept(new Event.Alloc(1, Event.AllocFunction.FREE, 0, 0, 0, new long[] {0x500000, 0, 0, 0, 0, 0}));
        s.accept(new Event.Alloc(1, Event.AllocFunction.FREE, 0, 0, 0, none));
        s.accept(new Event.Stats(1, 4, 4, 1, 7, 0));
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
}
