package org.memtrace.rewrite;

import java.util.Map;

/**
 * The weight and block fields of the site table entries the trampolines write (docs/compiled-in.md, "The site
 * table"), by the link-time address of the instruction: {@link #FULL} for a plain rewrite (weights 1 on every
 * site, no block), or those of a selection ({@link Selective.Chosen#siteWeights}).
 */
final class SiteWeights {
    /**
     * One instruction's fields: its weights, and when {@code blockStart}, flag 0x02 with its block's n and
     * the sums of the block's traced weights.
     */
    record Fields(int ma, int aia, boolean blockStart, int blockRefs, int blockMa, int blockAia) {}

    /** Every site weighs 1 and counts no block: a rewrite without {@code --omega}. */
    static final SiteWeights FULL = new SiteWeights(null);

    private final Map<Long, Fields> byInstruction;

    private SiteWeights(Map<Long, Fields> byInstruction) { this.byInstruction = byInstruction; }

    static SiteWeights of(Map<Long, Fields> byInstruction) { return new SiteWeights(Map.copyOf(byInstruction)); }

    /** The u16 fields saturate rather than wrap, as {@code memtrace cc}'s. */
    private static int clamp(int v) { return Math.min(v, 0xffff); }

    /**
     * The fields of the {@code site}-th site of the instruction at {@code address}: {weightMa, weightAia,
     * blockRefs, blockMa, blockAia, extra flags}. As in {@code memtrace cc}, a selection puts the instruction's
     * weights and its block's counts on its first site; its other sites weigh 0.
     */
    int[] fields(long address, int site) {
        if (byInstruction == null) return new int[] {1, 1, 0, 0, 0, 0};
        Fields f = byInstruction.get(address);
        if (f == null || site > 0) return new int[] {0, 0, 0, 0, 0, 0};
        return f.blockStart()
                ? new int[] {clamp(f.ma()), clamp(f.aia()), clamp(f.blockRefs()), clamp(f.blockMa()), clamp(f.blockAia()),
                        org.memtrace.format.SiteFormat.FLAG_BLOCK_START}
                : new int[] {clamp(f.ma()), clamp(f.aia()), 0, 0, 0, 0};
    }
}
