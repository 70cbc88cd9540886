package org.memtrace.symbols;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.memtrace.symbols.AddressSpace.Region;

/**
 * The loaded modules' segments, sorted and disjoint, for {@link AddressSpace}: which module and region an
 * address lies in. Made again whenever the modules change; a lookup is a binary search, or none when the
 * address lies in the segment the last one found.
 */
final class ModuleSegments {

    static final long PAGE = 4096;
    static final ModuleSegments EMPTY = new ModuleSegments(new long[0], new long[0], new LoadedModule[0], new Region[0]);

    private final long[] starts;
    private final long[] ends;
    private final LoadedModule[] modules;
    private final Region[] regions;
    /** The segment the last lookup found: a trace's accesses come in runs over one module's data. */
    private int last;

    private ModuleSegments(long[] starts, long[] ends, LoadedModule[] modules, Region[] regions) {
        this.starts = starts;
        this.ends = ends;
        this.modules = modules;
        this.regions = regions;
    }

    /** The segment holding {@code address}, or -1. */
    int index(long address) {
        int i = last;
        if (i < starts.length && address >= starts[i] && address < ends[i]) return i;
        i = Arrays.binarySearch(starts, address);
        if (i < 0) i = -i - 2;
        if (i < 0 || address >= ends[i]) return -1;
        last = i;
        return i;
    }

    long start(int i) {
        return starts[i];
    }

    long end(int i) {
        return ends[i];
    }

    LoadedModule module(int i) {
        return modules[i];
    }

    Region region(int i) {
        return regions[i];
    }

    /** Where the segment below an address outside every segment ends (Long.MIN_VALUE with none below). */
    long gapStart(long address) {
        int below = below(address);
        // the segments are disjoint and sorted, so the one below ends by the address
        return below >= 0 ? ends[below] : Long.MIN_VALUE;
    }

    /** Where the segment above an address outside every segment starts (Long.MAX_VALUE with none above). */
    long gapEnd(long address) {
        int above = below(address) + 1;
        return above < starts.length ? starts[above] : Long.MAX_VALUE;
    }

    private int below(long address) {
        int below = Arrays.binarySearch(starts, address);
        return below < 0 ? -below - 2 : below;
    }

    /**
     * The segments of {@code modules}; {@code generation} says when each was last reported. The module reported
     * last owns its addresses: one reported before it over the same range was unloaded. Rewrite mode's
     * trampoline files come after every real module, whatever their order: their segment describes the
     * trampolines' text and also data the run never maps, which can reach into the module placed right above
     * them, and must not make that module look unloaded; they keep what is left free.
     */
    static ModuleSegments of(List<LoadedModule> modules, Map<LoadedModule, Long> generation) {
        record Seg(long start, long end, LoadedModule module) {}
        List<Seg> segs = new ArrayList<>();
        List<LoadedModule> latestFirst = new ArrayList<>(modules);
        latestFirst.sort(Comparator.comparing((LoadedModule m) -> trampolines(m))
                .thenComparing(Comparator.comparingLong((LoadedModule m) -> generation.getOrDefault(m, 0L)).reversed()));
        TreeMap<Long, Long> taken = new TreeMap<>();
        for (LoadedModule m : latestFirst) {
            boolean clipped = trampolines(m);
            if (!clipped && overlaps(taken, m.base(), m.end())) continue;
            List<Seg> mine = new ArrayList<>();
            for (ElfSegment s : m.image().loadSegments()) {
                long start = m.bias() + (s.vaddr() & -PAGE);
                long end = m.bias() + ((s.vaddr() + s.memSize() + PAGE - 1) & -PAGE);
                if (clipped) {
                    Map.Entry<Long, Long> below = taken.floorEntry(start);
                    if (below != null && below.getValue() > start) continue;
                    Long above = taken.ceilingKey(start);
                    if (above != null && above < end) end = above;
                }
                mine.add(new Seg(start, end, m));
            }
            segs.addAll(mine);
            if (!clipped) taken.put(m.base(), m.end());
            else for (Seg g : mine) taken.put(g.start(), g.end());
        }
        segs.sort(Comparator.comparingLong(Seg::start));
        int n = segs.size();
        ModuleSegments made = new ModuleSegments(new long[n], new long[n], new LoadedModule[n], new Region[n]);
        Map<LoadedModule, Region> regionOf = new HashMap<>();
        for (int i = 0; i < n; i++) {
            Seg s = segs.get(i);
            made.starts[i] = s.start();
            // Neighbouring segments that share a page after rounding must not overlap, or the search breaks.
            made.ends[i] = i + 1 < n ? Math.min(s.end(), segs.get(i + 1).start()) : s.end();
            made.modules[i] = s.module();
            made.regions[i] = regionOf.computeIfAbsent(s.module(), m -> new Region(m.name(), m.base(), m.end()));
        }
        return made;
    }

    /** Whether {@code m} is one of rewrite mode's trampoline files (rewrite/ModuleRewrite: {@code <cache>/rewrite/<key>.elf}). */
    private static boolean trampolines(LoadedModule m) {
        String p = m.image().path();
        int slash = p == null ? -1 : p.lastIndexOf('/');
        return slash > 0 && p.startsWith("/rewrite/", slash - 8) && p.substring(slash + 1).matches("[0-9a-f]{64}\\.elf");
    }

    private static boolean overlaps(TreeMap<Long, Long> taken, long start, long end) {
        Map.Entry<Long, Long> below = taken.floorEntry(start);
        if (below != null && below.getValue() > start) return true;
        Map.Entry<Long, Long> above = taken.ceilingEntry(start);
        return above != null && above.getKey() < end;
    }
}
