package org.memtrace.cache;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A deliberately plain cache model to check {@link CacheHierarchy} against: each set is a list of line
 * objects kept in the policy's order, each level its own object, no arrays, no bit tricks. It follows the
 * conventions docs/cachesim.md states (fill the lowest empty way first, the random policy draws only when a
 * full set evicts, fill before writeback), implemented independently.
 */
final class ReferenceCache {

    private static final class Line {
        final long number;
        boolean dirty;
        final int way;

        Line(long number, boolean dirty, int way) {
            this.number = number;
            this.dirty = dirty;
            this.way = way;
        }
    }

    private static final class Level {
        final int sets, ways, lineSize;
        final Policy policy;
        /** Per set: LRU in use order (most recent last), FIFO in fill order (oldest first), others by fill. */
        final List<List<Line>> content = new ArrayList<>();
        /** PLRU: per set, the tree of direction flags, node n at index n (1-based heap order); false = left. */
        final List<boolean[]> trees = new ArrayList<>();
        final SplittableRandom random;
        long loads, stores, loadMisses, storeMisses, writebacks;

        Level(CacheGeometry g, Policy policy, long seed) {
            sets = (int) (g.size() / g.ways() / g.lineSize());
            ways = g.ways();
            lineSize = g.lineSize();
            this.policy = policy;
            for (int s = 0; s < sets; s++) {
                content.add(new ArrayList<>());
                trees.add(new boolean[ways]);
            }
            random = new SplittableRandom(seed);
        }

        List<Line> setOf(long lineNumber) { return content.get((int) (lineNumber % sets)); }

        Line find(long lineNumber) {
            for (Line l : setOf(lineNumber)) if (l.number == lineNumber) return l;
            return null;
        }

        void used(Line l) {
            List<Line> set = setOf(l.number);
            if (policy == Policy.LRU) {
                set.remove(l);
                set.add(l);
            } else if (policy == Policy.PLRU) {
                boolean[] tree = trees.get((int) (l.number % sets));
                // From the root, descend towards the way and point every node at the other half.
                int lo = 0, hi = ways, node = 1;
                while (hi - lo > 1) {
                    int mid = (lo + hi) / 2;
                    boolean right = l.way >= mid;
                    tree[node] = !right;
                    node = 2 * node + (right ? 1 : 0);
                    if (right) lo = mid;
                    else hi = mid;
                }
            }
        }

        /** Returns the evicted line if dirty, else null. */
        Line put(long lineNumber, boolean dirty) {
            List<Line> set = setOf(lineNumber);
            Line evicted = null;
            int way;
            if (set.size() < ways) {
                boolean[] taken = new boolean[ways];
                for (Line l : set) taken[l.way] = true;
                way = 0;
                while (taken[way]) way++;
            } else {
                Line victim = switch (policy) {
                    case LRU, FIFO -> set.get(0);
                    case RANDOM -> byWay(set, random.nextInt(ways));
                    case PLRU -> {
                        boolean[] tree = trees.get((int) (lineNumber % sets));
                        int lo = 0, hi = ways, node = 1;
                        while (hi - lo > 1) {
                            int mid = (lo + hi) / 2;
                            boolean right = tree[node];
                            node = 2 * node + (right ? 1 : 0);
                            if (right) lo = mid;
                            else hi = mid;
                        }
                        yield byWay(set, lo);
                    }
                };
                set.remove(victim);
                way = victim.way;
                if (victim.dirty) evicted = victim;
            }
            Line l = new Line(lineNumber, dirty, way);
            set.add(l);
            used(l);
            return evicted;
        }

        static Line byWay(List<Line> set, int way) {
            for (Line l : set) if (l.way == way) return l;
            throw new AssertionError("no way " + way);
        }
    }

    private final List<Level> levels = new ArrayList<>();

    ReferenceCache(List<CacheGeometry> geometries, Policy policy, long seed) {
        for (int i = 0; i < geometries.size(); i++) levels.add(new Level(geometries.get(i), policy, seed + i));
    }

    /** Per line of the first level the access covers: the number of the level that had it (levels.size() = memory). */
    List<Integer> access(long address, int size, boolean store) {
        List<Integer> reached = new ArrayList<>();
        int line = levels.get(0).lineSize;
        long end = address + Math.max(size, 1);
        for (long a = address - Math.floorMod(address, line); a < end; a += line) reached.add(fetch(0, a, store));
        return reached;
    }

    private int fetch(int i, long address, boolean store) {
        if (i == levels.size()) return i;
        Level level = levels.get(i);
        long number = address / level.lineSize;
        if (store) level.stores++;
        else level.loads++;
        Line l = level.find(number);
        if (l != null) {
            if (store && i == 0) l.dirty = true;
            level.used(l);
            return i;
        }
        if (store) level.storeMisses++;
        else level.loadMisses++;
        int reached = fetch(i + 1, address, store);
        Line evicted = level.put(number, store && i == 0);
        if (evicted != null) writeBack(i, evicted.number * level.lineSize);
        return reached;
    }

    private void writeBack(int i, long address) {
        levels.get(i).writebacks++;
        if (i + 1 == levels.size()) return;
        Level next = levels.get(i + 1);
        long number = address / next.lineSize;
        Line l = next.find(number);
        if (l != null) {
            l.dirty = true;
            next.used(l);
            return;
        }
        Line evicted = next.put(number, true);
        if (evicted != null) writeBack(i + 1, evicted.number * next.lineSize);
    }

    /** Per level: loads, stores, load misses, store misses, writebacks. */
    List<List<Long>> counts() {
        return levels.stream().map(l -> List.of(l.loads, l.stores, l.loadMisses, l.storeMisses, l.writebacks)).toList();
    }
}
