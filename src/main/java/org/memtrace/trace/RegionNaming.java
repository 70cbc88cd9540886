package org.memtrace.trace;

import org.memtrace.event.Event;

/**
 * The naming used until the symbolic resolver is wired in: regions from the stream's memory map
 * ({@code [heap]}, {@code [stack]}, {@code [anon]}, a file's base name), every address in hex.
 * Traced ranges take precedence over the memory map because they reflect later mmap/brk changes.
 */
public final class RegionNaming implements Naming {
    private final IntervalMap<String> mappings = new IntervalMap<>();
    private final IntervalMap<Event.RegionKind> ranges = new IntervalMap<>();

    @Override
    public void observe(Event event) {
        switch (event) {
            case Event.Mapping m -> mappings.put(m.start(), m.end(), mappingName(m.path()));
            case Event.Range r when r.added() -> ranges.put(r.start(), r.end(), r.kind());
            case Event.Range r -> ranges.remove(r.start(), r.end());
            case Event.Alloc a when a.function() == Event.AllocFunction.MMAP && !failedMapping(a.result()) ->
                    mappings.put(a.result(), a.result() + a.arg(1), (int) a.arg(4) >= 0 ? "[file]" : "[anon]");
            case Event.Alloc a when a.function() == Event.AllocFunction.MUNMAP ->
                    mappings.remove(a.arg(0), a.arg(0) + a.arg(1));
            default -> {}
        }
    }

    private static boolean failedMapping(long result) { return result == -1 || result == 0; }

    private static String mappingName(String path) {
        if (path.isEmpty()) return "[anon]";
        if (path.startsWith("[")) return path;
        return path.substring(path.lastIndexOf('/') + 1);
    }

    /**
     * Traced ranges say what the memory is; data and file ranges are named after the file mapped there,
     * looked up at query time because the agent may report the range before the mapping.
     */
    @Override
    public String region(long address) {
        Event.RegionKind kind = ranges.get(address);
        String file = mappings.get(address);
        if (kind == null) return file != null ? file : "[unknown]";
        return switch (kind) {
            case HEAP -> "[heap]";
            case ANON -> "[anon]";
            case DATA -> file != null ? file : "[data]";
            case FILE -> file != null ? file : "[file]";
        };
    }

    @Override
    public String data(long address) { return hex(address); }

    @Override
    public String code(long ip) { return hex(ip); }

    @Override
    public String block(Event.Alloc allocation) {
        return switch (allocation.function()) {
            case FREE, MUNMAP -> hex(allocation.arg(0));
            default -> hex(allocation.result());
        };
    }

    static String hex(long v) { return "0x" + Long.toHexString(v); }
}
