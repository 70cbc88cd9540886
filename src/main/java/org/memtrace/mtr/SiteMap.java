package org.memtrace.mtr;

/**
 * Run-time site address → site, for every instrumented module loaded. Open addressing on primitive keys:
 * it is looked up once per access record, so it must not box.
 */
final class SiteMap {
    private long[] keys = new long[1024];
    private SiteTable.Site[] values = new SiteTable.Site[1024];
    private int size;

    void put(long key, SiteTable.Site value) {
        if (2 * (size + 1) > keys.length) grow();
        int i = slot(key, keys.length);
        while (values[i] != null && keys[i] != key) i = (i + 1) & (keys.length - 1);
        if (values[i] == null) size++;
        keys[i] = key;
        values[i] = value;
    }

    SiteTable.Site get(long key) {
        int mask = keys.length - 1;
        for (int i = slot(key, keys.length); values[i] != null; i = (i + 1) & mask)
            if (keys[i] == key) return values[i];
        return null;
    }

    private static int slot(long key, int capacity) {
        return (int) ((key * 0x9E3779B97F4A7C15L) >>> 32) & (capacity - 1);
    }

    private void grow() {
        long[] oldKeys = keys;
        SiteTable.Site[] oldValues = values;
        keys = new long[oldKeys.length * 2];
        values = new SiteTable.Site[oldKeys.length * 2];
        size = 0;
        for (int i = 0; i < oldKeys.length; i++) if (oldValues[i] != null) put(oldKeys[i], oldValues[i]);
    }
}
