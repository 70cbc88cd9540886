package org.memtrace.testutil;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.memtrace.event.Event;

/**
 * One run of the probe fixture: the module and mapping events the agent would have sent for that process
 * (built from the probe's dl_iterate_phdr and /proc/self/maps output), and the run-time addresses it printed.
 */
public record ProbeRun(List<Event> events, Map<String, Long> addresses) {

    public static ProbeRun of(Path program) throws IOException, InterruptedException {
        return of(program, null);
    }

    /**
     * Runs the probe, with {@code preload} (the allocshim fixture) as LD_PRELOAD when not null: its ALLOC
     * lines become the allocation events, after the module and mapping events.
     */
    public static ProbeRun of(Path program, Path preload) throws IOException, InterruptedException {
        List<Event> allocations = new ArrayList<>();
        List<Event> mappings = new ArrayList<>();
        List<Event> modules = new ArrayList<>();
        Map<String, Long> addresses = new HashMap<>();
        Map<String, String> environment = preload == null ? Map.of() : Map.of("LD_PRELOAD", preload.toString());
        for (String line : Gcc.run(List.of(program.toString()), environment).split("\n")) {
            String[] f = line.trim().split("\\s+", 7);
            switch (f[0]) {
                case "MODULE" -> modules.add(new Event.Module(1, Long.parseUnsignedLong(f[1], 16), new byte[0], f.length > 2 ? f[2] : ""));
                case "MAP" -> {
                    String[] range = f[1].split("-");
                    int prot = (f[2].charAt(0) == 'r' ? 1 : 0) | (f[2].charAt(1) == 'w' ? 2 : 0) | (f[2].charAt(2) == 'x' ? 4 : 0);
                    mappings.add(new Event.Mapping(1, Long.parseUnsignedLong(range[0], 16), Long.parseUnsignedLong(range[1], 16),
                            Long.parseUnsignedLong(f[3], 16), prot, false, f.length > 6 ? f[6] : ""));
                }
                case "ADDR" -> addresses.put(f[1], Long.parseUnsignedLong(f[2], 16));
                case "ALLOC" -> allocations.add(new Event.Alloc(1, Event.AllocFunction.of(Integer.parseInt(f[1])),
                        Long.parseUnsignedLong(f[2], 16), Long.parseUnsignedLong(f[3], 16), Long.parseUnsignedLong(f[4], 16),
                        new long[] {Long.parseUnsignedLong(f[5], 16), Long.parseUnsignedLong(f[6], 16), 0, 0, 0, 0}));
                default -> { }
            }
        }
        // The agent reports modules first: the main program's empty name must wait for the memory map.
        List<Event> events = new ArrayList<>(modules);
        events.addAll(mappings);
        events.addAll(allocations);
        return new ProbeRun(List.copyOf(events), Map.copyOf(addresses));
    }

    public long address(String name) {
        Long a = addresses.get(name);
        if (a == null) throw new IllegalArgumentException("probe printed no address for " + name);
        return a;
    }
}
