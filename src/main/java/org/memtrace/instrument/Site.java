package org.memtrace.instrument;

import org.memtrace.format.SiteFormat;

/**
 * One probe site: one record the probe stores before an instruction, and its entry of the
 * {@code memtrace_sites} table (docs/compiled-in.md, "The site table"; its kinds and flags are {@link SiteFormat}'s).
 *
 * @param address the operand whose address the probe computes with {@code lea}, in AT&T syntax, already
 *                adjusted for the probe's 152 bytes below the program's %rsp
 * @param fs      the operand is %fs-relative: the probe adds the thread pointer
 */
record Site(String address, boolean fs, int kind, int size, int access, int flags, int weightMa, int weightAia,
            int blockRefs, int blockMa, int blockAia) {

    /** This site with the weights of its instruction. */
    Site weighted(int ma, int aia) {
        return new Site(address, fs, kind, size, access, flags, clamp(ma), clamp(aia), blockRefs, blockMa, blockAia);
    }

    /** This site as the first of its basic block, carrying the block's counts. */
    Site blockStart(int refs, int ma, int aia) {
        return new Site(address, fs, kind, size, access, flags | SiteFormat.FLAG_BLOCK_START, weightMa, weightAia, clamp(refs),
                clamp(ma), clamp(aia));
    }

    Site withFlags(int extra) {
        return new Site(address, fs, kind, size, access, flags | extra, weightMa, weightAia, blockRefs, blockMa, blockAia);
    }

    /** The table's u16 fields saturate rather than wrap: a block of 70 000 references is not a block of 4 464. */
    private static int clamp(int v) {
        return Math.min(v, 0xffff);
    }
}
