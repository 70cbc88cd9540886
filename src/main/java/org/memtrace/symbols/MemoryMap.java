package org.memtrace.symbols;

import java.util.Map;
import java.util.TreeMap;
import org.memtrace.event.Event;
import org.memtrace.symbols.AddressSpace.Region;
import org.memtrace.symbols.AddressSpace.RegionSpan;

/**
 * The memory outside loaded modules, for {@link AddressSpace}: the memory map (MT_MAPPING) and the traced
 * ranges the agent reported (MT_RANGE), which name an address before the map does.
 */
final class MemoryMap {

    private final Intervals<Region> mappings = new Intervals<>();
    private final Intervals<Region> ranges = new Intervals<>();
    /** File mappings at file offset 0 by start address: where each file's first page was mapped. */
    private final TreeMap<Long, String> fileStarts = new TreeMap<>();

    void addMapping(Event.Mapping m) {
        String path = m.path();
        String name = path.isEmpty() ? "[anon]" : path.startsWith("[") ? path : ModuleImage.baseName(path);
        // Offsets into a file mapping count from where the file's first byte would be: they are file offsets.
        long origin = path.isEmpty() || path.startsWith("[") ? m.start() : m.start() - m.offset();
        mappings.put(m.start(), m.end(), new Region(name, origin, m.end()));
        if (m.offset() == 0 && !path.isEmpty() && !path.startsWith("[")) {
            fileStarts.put(m.start(), ModuleImage.withoutDeletedMark(path));
        }
    }

    void changeRange(Event.Range r) {
        if (!r.added()) {
            ranges.remove(r.start(), r.end());
            return;
        }
        String name = switch (r.kind()) {
            case HEAP -> "[heap]";
            case ANON -> "[anon]";
            case FILE, DATA -> {
                Intervals.Span<Region> mapping = mappings.get(r.start());
                yield mapping != null ? mapping.value().name() : r.kind() == Event.RegionKind.FILE ? "[file]" : "[data]";
            }
        };
        ranges.put(r.start(), r.end(), new Region(name, r.start(), r.end()));
    }

    /**
     * The loader reports the main program with an empty name. Its first page is the file mapped at offset 0
     * at the load bias (PIE) or, for a fixed-address executable (bias 0), the lowest file mapping.
     */
    String fileMappedAtOrAbove(long bias) {
        Map.Entry<Long, String> e = fileStarts.ceilingEntry(bias);
        return e == null ? null : e.getValue();
    }

    /** The traced range holding an address, else its memory-map line; null when nothing is known. */
    Region region(long address) {
        Intervals.Span<Region> s = ranges.get(address);
        if (s != null) return s.value();
        s = mappings.get(address);
        return s != null ? s.value() : null;
    }

    /** {@link #region} with the stretch around it that has that region too, within [{@code lo}, {@code hi}). */
    RegionSpan regionSpan(long address, long lo, long hi) {
        Intervals.Span<Region> s = ranges.get(address);
        if (s != null) return new RegionSpan(s.value(), Math.max(lo, s.start()), Math.min(hi, s.end()));
        s = mappings.get(address);
        if (s == null) return null;
        lo = Math.max(lo, Math.max(s.start(), ranges.gapStart(address)));
        hi = Math.min(hi, Math.min(s.end(), ranges.gapEnd(address)));
        return new RegionSpan(s.value(), lo, hi);
    }
}
