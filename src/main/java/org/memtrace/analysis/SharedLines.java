package org.memtrace.analysis;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongPredicate;
import org.memtrace.trace.Naming;

/**
 * The false-sharing bookkeeping of the multi-core simulation: which bytes of a line each core read and
 * wrote since its copy arrived, and, for every line that moved between cores, the perf c2c row: HITMs,
 * invalidations, and each transfer judged true or false sharing. A transfer is <i>true</i> sharing when the
 * requesting access's bytes overlap what the holder's copy was used for (a load against the holder's
 * written bytes, a store against its read or written bytes): the data had to move. It is <i>false</i>
 * sharing when they are disjoint: only the line was shared.
 *
 * <p>Bytes are tracked at one bit per byte for lines up to 64 bytes (per 1/64th of a line above). What it
 * gets wrong: a holder whose bytes are not known any more (its entry was dropped to bound memory, see
 * {@link #prune}) counts as true sharing, so a false-sharing verdict is never made without evidence; a
 * holder's copy that several threads of one core used names none of them in the line's thread list (the
 * masks are per core), so such a thread shows only its accesses after the line's first transfer.
 */
final class SharedLines {
    private final int cores, lineBits, byteShift;
    private final Naming naming;
    /**
     * Per line, the bytes each core's current copy was used for: read masks, then write masks, by core; then
     * by core the one thread that used the copy since it arrived, or -1 when several did (a core runs
     * thread k mod N).
     */
    private final Map<Long, long[]> used = new HashMap<>();
    private final Map<Long, Row> rows = new HashMap<>();
    private final int limit;

    /**
     * What one thread did to a reported line: its holder's use of the copy each transfer took, and every
     * access from the line's first transfer on; and the name of the first byte it touched.
     */
    static final class ThreadBytes {
        long read, written;
        final String name;

        ThreadBytes(String name) { this.name = name; }
    }

    /** The perf c2c view of one line. */
    static final class Row {
        final long line;
        final String object;
        long hitm, invalidations, falseSharing, trueSharing;
        final Map<Integer, ThreadBytes> threads = new LinkedHashMap<>();

        Row(long line, String object) {
            this.line = line;
            this.object = object;
        }

        long transfers() { return hitm + invalidations; }

        String verdict() {
            return falseSharing > 0 && trueSharing == 0 ? "false sharing"
                    : trueSharing > 0 && falseSharing == 0 ? "true sharing" : "false and true sharing";
        }
    }

    /** {@code limit}: lines of byte masks kept before {@link #prune} drops those no core holds. */
    SharedLines(int cores, int lineSize, Naming naming, int limit) {
        this.cores = cores;
        this.lineBits = Integer.numberOfTrailingZeros(lineSize);
        this.byteShift = Math.max(0, lineBits - 6);
        this.naming = naming;
        this.limit = limit;
    }

    /** The mask bits of bytes [address, address + size) of one line. */
    long bits(long address, int size) {
        int first = (int) (address & ((1L << lineBits) - 1)) >>> byteShift;
        int last = (int) ((address & ((1L << lineBits) - 1)) + Math.max(size, 1) - 1) >>> byteShift;
        return (last == 63 ? -1L : (1L << (last + 1)) - 1) & -(1L << first);
    }

    /**
     * {@code holder}'s copy left or was cleaned because {@code requester}'s access to bytes {@code bits} of
     * the line needed it: counts and judges the transfer.
     */
    void transfer(int requester, int holder, long lineAddress, boolean dirty, boolean store, long bits) {
        long line = lineAddress >>> lineBits;
        long[] u = line == lastLine ? lastUsed : used.get(line);
        boolean overlap = u == null || (bits & (store ? u[holder] | u[cores + holder] : u[cores + holder])) != 0;
        Row row = rows.computeIfAbsent(line, l -> new Row(lineAddress, naming.object(lineAddress)));
        // the holder's thread is named with the bytes its copy was used for: without this, a thread that
        // wrote its half of the line and finished would be missing from the view of the sharing it caused
        if (u != null && u[2 * cores + holder] >= 0 && !row.threads.containsKey((int) u[2 * cores + holder]))
            holderUse(row, (int) u[2 * cores + holder], lineAddress, u[holder], u[cores + holder]);
        if (dirty) row.hitm++;
        if (store) row.invalidations++;
        if (overlap) row.trueSharing++;
        else row.falseSharing++;
        if (store && u != null) {
            u[holder] = 0;
            u[cores + holder] = 0;
        }
    }

    /**
     * After the cache access: thread {@code tid} on {@code core} used bytes {@code bits} of the line at
     * {@code address}; {@code fresh} when its core had no copy before (the masks start again).
     */
    void used(int core, int tid, long address, long bits, boolean store, boolean fresh) {
        long line = address >>> lineBits;
        // a walk uses one line many times in a row: no map lookup (and no boxed key) for those
        long[] u = line == lastLine ? lastUsed : used.get(line);
        if (u == null) {
            if (used.size() >= limit) prune();
            u = new long[3 * cores];
            used.put(line, u);
        } else if (fresh) {
            u[core] = 0;
            u[cores + core] = 0;
        }
        lastLine = line;
        lastUsed = u;
        int user = 2 * cores + core;
        u[user] = (u[core] | u[cores + core]) == 0 || u[user] == tid ? tid : -1;
        if (store) u[cores + core] |= bits;
        else u[core] |= bits;
        if (rows.isEmpty()) return;
        Row row = rows.get(line);
        if (row == null) return;
        ThreadBytes t = row.threads.computeIfAbsent(tid, k -> new ThreadBytes(naming.data(address)));
        if (store) t.written |= bits;
        else t.read |= bits;
    }

    /** Enters {@code tid}, the one thread that used the holder's copy, with the bytes it used. */
    private void holderUse(Row row, int tid, long lineAddress, long read, long written) {
        long bits = read | written;
        if (bits == 0) return;
        ThreadBytes t = new ThreadBytes(naming.data(lineAddress + ((long) Long.numberOfTrailingZeros(bits) << byteShift)));
        t.read = read;
        t.written = written;
        row.threads.put(tid, t);
    }

    private LongPredicate held;
    private long lastLine = -1;
    private long[] lastUsed;

    /** Tells {@link #prune} whether any core's private caches hold a line (by line number). */
    void heldBy(LongPredicate held) { this.held = held; }

    /** Drops the masks of lines that no core holds any more: their next use starts from nothing anyway. */
    private void prune() {
        if (held != null) used.keySet().removeIf(line -> !held.test(line));
        lastLine = -1;
        lastUsed = null;
    }

    /** The lines that moved between cores, the most transfers first. */
    List<Row> rows(int n) {
        List<Row> all = new ArrayList<>(rows.values());
        all.sort(Comparator.comparingLong(Row::transfers).reversed().thenComparingLong(r -> r.line));
        return all.size() > n ? all.subList(0, n) : all;
    }

    int lineCount() { return rows.size(); }

    /** Mask bits as byte ranges of the line: {@code 0-7,16-23}; empty when none. */
    String ranges(long bits) {
        StringBuilder s = new StringBuilder();
        int g = 1 << byteShift;
        for (int i = 0; i < 64; ) {
            if ((bits >>> i & 1) == 0) {
                i++;
                continue;
            }
            int j = i;
            while (j + 1 < 64 && (bits >>> (j + 1) & 1) != 0) j++;
            if (!s.isEmpty()) s.append(',');
            s.append(i * g).append('-').append((j + 1) * g - 1);
            i = j + 1;
        }
        return s.toString();
    }
}
