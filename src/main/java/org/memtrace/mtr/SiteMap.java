package org.memtrace.mtr;

import java.util.function.LongPredicate;
import org.memtrace.event.Event;

/**
 * Run-time site address → site, for the sites a trace's records named. Open addressing on primitive keys:
 * it is looked up once per access record, so it must not box. An access site's {@link Event.ProbeSite}
 * sits in an array of its own, so the common record reads no {@link SiteTable.Site} object. (A slot that
 * kept the addresses' order within a window of code, for sites executed together to share cache lines,
 * made sqlite3's pass 15 % slower: the runs of a function's sites made long probe sequences.)
 */
final class SiteMap {
    private long[] keys = new long[1024];
    private SiteTable.Site[] values = new SiteTable.Site[1024];
    private Event.ProbeSite[] accesses = new Event.ProbeSite[1024];
    private int size;

    void put(long key, SiteTable.Site value) {
        if (2 * (size + 1) > keys.length) grow();
        int mask = keys.length - 1;
        int i = slot(key, mask);
        while (values[i] != null && keys[i] != key) i = (i + 1) & mask;
        if (values[i] == null) size++;
        keys[i] = key;
        values[i] = value;
        accesses[i] = value instanceof SiteTable.Access a ? a.site() : null;
    }

    SiteTable.Site get(long key) {
        int mask = keys.length - 1;
        for (int i = slot(key, mask); values[i] != null; i = (i + 1) & mask)
            if (keys[i] == key) return values[i];
        return null;
    }

    /** The site at {@code key} when it is an access site ({@link SiteTable.Access}); null when it is another kind or unknown. */
    Event.ProbeSite access(long key) {
        int mask = keys.length - 1;
        for (int i = slot(key, mask); values[i] != null; i = (i + 1) & mask)
            if (keys[i] == key) return accesses[i];
        return null;
    }

    private static int slot(long key, int mask) {
        return (int) ((key * 0x9E3779B97F4A7C15L) >>> 32) & mask;
    }

    /** Drops the entries whose key {@code drop} accepts. */
    void removeIf(LongPredicate drop) {
        rebuild(keys.length, drop);
    }

    private void grow() {
        rebuild(keys.length * 2, k -> false);
    }

    private void rebuild(int capacity, LongPredicate drop) {
        long[] oldKeys = keys;
        SiteTable.Site[] oldValues = values;
        keys = new long[capacity];
        values = new SiteTable.Site[capacity];
        accesses = new Event.ProbeSite[capacity];
        size = 0;
        for (int i = 0; i < oldKeys.length; i++) if (oldValues[i] != null && !drop.test(oldKeys[i])) put(oldKeys[i], oldValues[i]);
    }
}
