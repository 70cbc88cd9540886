package org.memtrace.cli;

import java.util.List;

/**
 * One object's loads and stores among a trace's CSV export rows (seq,kind,store,address,size,ip,instruction,
 * thread,region,symbol,offset,...), and the report's time grid for it: the browser tests compute what a heat-map
 * cell or a zoomed axis must say from these, never from the page.
 */
record ObjectAccesses(List<String[]> rows) {
    static ObjectAccesses of(List<String[]> csvRows, String symbol) {
        return new ObjectAccesses(csvRows.stream()
                .filter(r -> r[9].equals(symbol) && (r[1].equals("L") || r[1].equals("S"))).toList());
    }

    long first() { return rows.stream().mapToLong(r -> Long.parseLong(r[0])).min().orElseThrow(); }

    long last() { return rows.stream().mapToLong(r -> Long.parseLong(r[0])).max().orElseThrow(); }

    /** The grid's events per column: the least power of two that puts the last access in column 63 or before. */
    long perColumn() {
        long per = 1;
        while ((last() - first()) / per >= 64) per *= 2;
        return per;
    }
}
