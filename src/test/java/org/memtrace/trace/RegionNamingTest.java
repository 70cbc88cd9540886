package org.memtrace.trace;

import static org.assertj.core.api.Assertions.*;

import org.junit.jupiter.api.Test;
import org.memtrace.event.Event;

class RegionNamingTest {
    @Test
    void namesRegionsFromMappingsAndTracedRanges() {
        var n = new RegionNaming();
        n.observe(new Event.Range(1, true, 0x404000, 0x406000, Event.RegionKind.DATA, 3));
        n.observe(new Event.Mapping(1, 0x400000, 0x401000, 0, 5, false, "/usr/bin/prog"));
        n.observe(new Event.Mapping(1, 0x404000, 0x406000, 0x3000, 3, true, "/usr/bin/prog"));
        n.observe(new Event.Mapping(1, 0x406000, 0x427000, 0, 3, true, "[heap]"));
        n.observe(new Event.Mapping(1, 0x7ffc0000L, 0x7ffd0000L, 0, 3, false, "[stack]"));
        n.observe(new Event.Mapping(1, 0x7f000000L, 0x7f001000L, 0, 3, false, ""));
        assertThat(n.region(0x404010)).isEqualTo("prog");
        assertThat(n.region(0x406010)).isEqualTo("[heap]");
        assertThat(n.region(0x7ffc0010L)).isEqualTo("[stack]");
        assertThat(n.region(0x7f000010L)).isEqualTo("[anon]");
        assertThat(n.region(0x10)).isEqualTo("[unknown]");
        assertThat(n.data(0x404010)).isEqualTo("0x404010");
        assertThat(n.code(0x401010)).isEqualTo("0x401010");

        long[] args = {0, 8192, 3, 0x22, -1, 0};
        n.observe(new Event.Alloc(1, Event.AllocFunction.MMAP, 0x401000, 0x7e0000000000L, 8192, args));
        assertThat(n.region(0x7e0000001000L)).isEqualTo("[anon]");
        n.observe(new Event.Alloc(1, Event.AllocFunction.MUNMAP, 0x401000, 0, 0, new long[] {0x7e0000000000L, 4096, 0, 0, 0, 0}));
        assertThat(n.region(0x7e0000000010L)).isEqualTo("[unknown]");
        assertThat(n.region(0x7e0000001010L)).isEqualTo("[anon]");

        n.observe(new Event.Range(1, true, 0x500000, 0x510000, Event.RegionKind.HEAP, 3));
        assertThat(n.region(0x500000)).isEqualTo("[heap]");
        n.observe(new Event.Range(1, false, 0x500000, 0x510000, Event.RegionKind.HEAP, 3));
        assertThat(n.region(0x500000)).isEqualTo("[unknown]");
    }

    @Test
    void intervalMapSplitsOverlaps() {
        var m = new IntervalMap<String>();
        m.put(0, 100, "a");
        m.put(40, 60, "b");
        assertThat(m.get(39)).isEqualTo("a");
        assertThat(m.get(40)).isEqualTo("b");
        assertThat(m.get(60)).isEqualTo("a");
        m.remove(50, 70);
        assertThat(m.get(55)).isNull();
        assertThat(m.get(45)).isEqualTo("b");
        assertThat(m.get(70)).isEqualTo("a");
        assertThat(m.size()).isEqualTo(3);
        m.put(0xffff_0000_0000_0000L, 0xffff_0000_0000_1000L, "kernel-ish");
        assertThat(m.get(0xffff_0000_0000_0010L)).isEqualTo("kernel-ish");
    }
}
