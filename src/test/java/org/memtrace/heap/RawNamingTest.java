package org.memtrace.heap;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.memtrace.event.Event;
import org.memtrace.event.Event.AllocFunction;
import org.memtrace.symbols.AddressSpace;

class RawNamingTest {

    @Test
    void rawLinesShowNumbersAndTheSameRegionsWhileEventsApplyOnce() {
        SymbolicNaming symbolic = new SymbolicNaming(new AddressSpace());
        RawNaming raw = new RawNaming(symbolic);
        Event.Mapping heap = new Event.Mapping(1, 0x555500000000L, 0x555500021000L, 0, 3, true, "[heap]");
        Event.Alloc malloc = HeapTrackerTest.alloc(AllocFunction.MALLOC, 0x401000, 0x5555000002a0L, 536, 528);
        for (Event e : new Event[] {heap, malloc}) {
            symbolic.observe(e);
            raw.observe(e);
        }
        assertThat(symbolic.block(malloc)).isEqualTo("<malloc0001@0x401000>");
        assertThat(raw.block(malloc)).isEqualTo("0x5555000002a0");
        assertThat(raw.data(0x5555000002a0L + 524)).isEqualTo("0x5555000004ac");
        assertThat(raw.region(0x5555000002a0L + 524)).isEqualTo("[heap]");
        assertThat(raw.code(0x401234)).isEqualTo("0x401234");
        Event.Alloc free = HeapTrackerTest.alloc(AllocFunction.FREE, 0x401010, 0, 0, 0x5555000002a0L);
        raw.observe(free);
        symbolic.observe(free);
        assertThat(raw.block(free)).isEqualTo("0x5555000002a0");
        assertThat(symbolic.block(free)).isEqualTo("<freed:0001@0x401000>");
        Event.Alloc next = HeapTrackerTest.alloc(AllocFunction.MALLOC, 0x401000, 0x555500001000L, 24, 24);
        symbolic.observe(next);
        assertThat(symbolic.block(next)).isEqualTo("<malloc0002@0x401000>");
    }
}
