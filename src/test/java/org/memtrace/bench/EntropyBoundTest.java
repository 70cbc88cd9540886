package org.memtrace.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;
import org.memtrace.event.Event;

/** The entropy bound's model (bench/corpus.sh's bound column) on access streams whose entropy is known. */
class EntropyBoundTest {
    private static Event.ProbeSite site(long ip) {
        return site(ip, Event.ProbeKind.LOAD);
    }

    private static Event.ProbeSite site(long ip, Event.ProbeKind kind) {
        return new Event.ProbeSite(ip, kind, 8, 0, 0, 0, 0, 0, 0, 0, null);
    }

    private static double log2(double x) {
        return Math.log(x) / Math.log(2);
    }

    /** n differences of which one (the first, to 0) is unlike the n - 1 others. */
    private static double oneOf(int n) {
        return log2(n) + (n - 1) * log2((double) n / (n - 1));
    }

    @Test
    void aConstantStrideCostsOnlyItsFirstAddress() {
        EntropyBound.Model m = new EntropyBound.Model();
        for (int i = 0; i < 1000; i++) m.access(7, 0x1000 + 8L * i, site(0x400));
        assertThat(m.addressBits()).isCloseTo(oneOf(1000), within(1e-6));
        assertThat(m.siteBits()).isZero();
        assertThat(m.accesses).isEqualTo(1000);
    }

    @Test
    void fourEquallyLikelyDifferencesCostTwoBitsEach() {
        EntropyBound.Model m = new EntropyBound.Model();
        long a = 0;
        m.access(1, a, site(0x400)); // the first difference (to 0) is 0: one of the 0-differences below
        for (int i = 0; i < 4000; i++) m.access(1, a += 8 * (i % 4), site(0x400));
        // 1001 zeros and 1000 each of 8, 16, 24 among 4001
        double expected = 1001 * log2(4001 / 1001.0) + 3 * 1000 * log2(4001 / 1000.0);
        assertThat(m.addressBits()).isCloseTo(expected, within(1e-6));
    }

    /** The same instruction in two threads is two contexts, interleaved or not; so are two sites' successors. */
    @Test
    void eachThreadsSitesAreContextsOfTheirOwn() {
        EntropyBound.Model m = new EntropyBound.Model();
        for (int i = 0; i < 500; i++) {
            m.access(1, 0x10000 + 8L * i, site(0x400));
            m.access(2, 0x90000 + 16L * i, site(0x400));
        }
        assertThat(m.addressBits()).isCloseTo(2 * oneOf(500), within(1e-6));
        assertThat(m.siteBits()).isZero();
        // thread 3: site A, then B or C alternately: one bit for each of A's 100 successors
        for (int i = 0; i < 100; i++) {
            m.access(3, 0x20000, site(0x500));
            m.access(3, 0x30000, site(i % 2 == 0 ? 0x600 : 0x700));
        }
        // B's and C's successors are all A: 0 bits; A's are 50 B and 50 C
        assertThat(m.siteBits()).isCloseTo(100, within(1e-6));
    }

    /**
     * A read-modify-write record (addl $1, (%rax,%rcx,4)) is a load and a store, as the summary's loads and
     * stores count it, so the bound is per the table's accesses; its store's address is the load's: no bits.
     * Counted once, a histogram's 1,000 increments were 1,004 accesses against the summary's 2,004.
     */
    @Test
    void aModifyIsALoadAndAStoreThatCostNoMoreBits() {
        EntropyBound.Model loads = new EntropyBound.Model(), modifies = new EntropyBound.Model();
        for (int i = 0; i < 1000; i++) {
            long a = 0x5000 + 4L * (i * 7919 % 256);
            loads.access(1, a, site(0x400));
            modifies.access(1, a, site(0x400, Event.ProbeKind.MODIFY));
            modifies.access(1, 0x9000 + 8L * i, site(0x410, Event.ProbeKind.STORE));
            loads.access(1, 0x9000 + 8L * i, site(0x410, Event.ProbeKind.STORE));
        }
        assertThat(loads.accesses).isEqualTo(2000);
        assertThat(modifies.accesses).isEqualTo(3000);
        assertThat(modifies.addressBits()).isCloseTo(loads.addressBits(), within(1e-6));
        assertThat(modifies.siteBits()).isCloseTo(loads.siteBits(), within(1e-6));
        double bound = (modifies.addressBits() + modifies.siteBits()) / 8 / 3000;
        assertThat(modifies.figures(6000)).startsWith("accesses 3000 file-bytes 6000 file-B/access 2.0000 bound-B/access "
                + String.format(java.util.Locale.ROOT, "%.4f ", bound));
    }
}
