package org.memtrace.mtr;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Undoes the runtime's site-delta transform of codec 2 (docs/compiled-in.md, "Codecs"): the runtime stores
 * every access record's address as its difference to the previous address of a site hashed to the same
 * table entry, so that a loop's records repeat and zstd keeps almost nothing of them. Every chunk starts
 * from an empty table, so chunks decode independently.
 */
final class SiteDelta {
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final int TABLE_BITS = 12;
    private static final long HASH = 0x9E3779B97F4A7C15L;

    private SiteDelta() {}

    /** Rewrites the slots of one decompressed chunk in place into the addresses the probes recorded. */
    static void undo(MemorySegment slots) {
        long[] table = new long[1 << TABLE_BITS];
        long end = slots.byteSize() & -MtrFile.SLOT;
        for (long at = 0; at < end; ) {
            long w1 = slots.get(U64, at + 8);
            if (w1 < 0) { // a tag, and the event record in the slots after it, are stored as they are
                long length = (w1 >>> 8) & 0xffff;
                at += MtrFile.SLOT * (1 + (length + MtrFile.SLOT - 1) / MtrFile.SLOT);
                continue;
            }
            int h = (int) ((w1 * HASH) >>> (64 - TABLE_BITS));
            long address = slots.get(U64, at) + table[h];
            table[h] = address;
            slots.set(U64, at, address);
            at += MtrFile.SLOT;
        }
    }
}
