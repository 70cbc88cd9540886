package org.memtrace.analysis;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.memtrace.cache.CacheHierarchy;
import org.memtrace.cache.LevelStats;
import org.memtrace.event.Event;
import org.memtrace.trace.Naming;
import org.memtrace.trace.TracedAccess;

/**
 * Runs the trace's loads, stores and block operations through a cache hierarchy and charges every line
 * that missed the first or the last level to the instruction that made the access and to the object that
 * holds the accessed byte. Objects are named as the trace names them at that moment (a line of a freed
 * block counts for {@code <freed:…>}): misses are counted per address while names stay the same, and each
 * address is named once when they change and at the end. Instructions are named at the end.
 */
public final class CacheSimulation implements AccessAnalysis {
    private final CacheHierarchy caches;
    private final Naming naming;
    private final MissCounts byInstruction = new MissCounts();
    /** Misses by data address since names last changed. */
    private final MissCounts byAddress = new MissCounts();
    private final Map<String, long[]> byObject = new HashMap<>();
    private long accesses, blocks;

    /** Misses charged to one instruction or object. */
    public record Misses(String name, long firstLevel, long lastLevel) {}

    public CacheSimulation(CacheHierarchy caches, Naming naming) {
        this.caches = caches;
        this.naming = naming;
    }

    @Override
    public void access(long sequence, TracedAccess t) {
        accesses++;
        long r = caches.access(t.address(), t.size(), t.store());
        if (r != 0) charge(t.ip(), t.address(), r);
    }

    @Override
    public void block(long sequence, Event.Block b) {
        blocks++;
        BlockChunks.expand(b, caches.lineSize(), (address, size, write) -> {
            long r = caches.access(address, size, write);
            if (r != 0) charge(b.ip(), address, r);
        });
    }

    private void charge(long ip, long address, long result) {
        int l1 = CacheHierarchy.firstLevelMisses(result), ll = CacheHierarchy.lastLevelMisses(result);
        byInstruction.add(ip, l1, ll);
        byAddress.add(address, l1, ll);
    }

    @Override
    public void namesChanged() {
        if (byAddress.isEmpty()) return;
        byAddress.forEach((address, l1, ll) -> {
            long[] o = byObject.computeIfAbsent(DataName.of(naming.object(address)).object(), k -> new long[2]);
            o[0] += l1;
            o[1] += ll;
        });
        byAddress.clear();
    }

    /** Names what is still counted by address; call once the trace has ended. */
    @Override
    public void finish() {
        namesChanged();
    }

    /** Loads and stores of the trace simulated so far (block operations not included). */
    public long accesses() { return accesses; }

    public long blockOperations() { return blocks; }

    public List<LevelStats> levels() { return caches.stats(); }

    /** The instructions with the most misses, by first-level misses or, with {@code lastLevel}, last-level ones. */
    public List<Misses> topInstructions(int n, boolean lastLevel) {
        Map<String, long[]> named = new HashMap<>();
        byInstruction.forEach((ip, l1, ll) -> {
            long[] sum = named.computeIfAbsent(naming.code(ip), k -> new long[2]);
            sum[0] += l1;
            sum[1] += ll;
        });
        return top(named, n, lastLevel);
    }

    public List<Misses> topObjects(int n, boolean lastLevel) {
        return top(byObject, n, lastLevel);
    }

    private static List<Misses> top(Map<String, long[]> counts, int n, boolean lastLevel) {
        List<Misses> all = new ArrayList<>();
        counts.forEach((name, m) -> {
            if ((lastLevel ? m[1] : m[0]) > 0) all.add(new Misses(name, m[0], m[1]));
        });
        Comparator<Misses> order = Comparator.comparingLong(lastLevel ? Misses::lastLevel : Misses::firstLevel).reversed()
                .thenComparing(Comparator.comparingLong(lastLevel ? Misses::firstLevel : Misses::lastLevel).reversed())
                .thenComparing(Misses::name);
        all.sort(order);
        return all.size() > n ? List.copyOf(all.subList(0, n)) : List.copyOf(all);
    }
}
