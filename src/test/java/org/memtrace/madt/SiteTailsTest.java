package org.memtrace.madt;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

class SiteTailsTest {
    private static final byte[] A = {'a'}, B = {'b'}, C = {'c'};

    /** The first address after {@code ip} whose tail goes to the same pair of slots. */
    private static long samePair(long ip) {
        long other = ip + 1;
        while (SiteTails.slot(other) != SiteTails.slot(ip)) other++;
        return other;
    }

    /** 0x9E3779B97F4A7C15's inverse modulo 2^64: an address this far from another hashes one more. */
    private static final long INVERSE = inverse(0x9E3779B97F4A7C15L);

    private static long inverse(long odd) {
        long x = odd; // Newton's iteration: each step doubles the correct low bits (3 to start with)
        for (int i = 0; i < 5; i++) x *= 2 - odd * x;
        return x;
    }

    /** An address whose tail goes to the same pair of slots and the same front slot as {@code ip}'s. */
    private static long sameSlots(long ip) {
        long other = ip + INVERSE;
        assertEquals(SiteTails.slot(ip), SiteTails.slot(other));
        assertEquals(SiteTails.front(ip), SiteTails.front(other));
        return other;
    }

    @Test
    void twoSitesOfOnePairTakingTurnsBothStay() {
        SiteTails tails = new SiteTails();
        long a = 0x401000, b = samePair(a);
        long shape = SiteTails.shape(8, 1);
        tails.add(a, shape, -1, A);
        tails.add(b, shape, -1, B);
        for (int turn = 0; turn < 3; turn++) {
            assertArrayEquals(A, tails.find(a, shape, -1));
            assertArrayEquals(B, tails.find(b, shape, -1));
        }
    }

    @Test
    void aThirdSiteEvictsTheOneUsedLeast() {
        SiteTails tails = new SiteTails();
        // one front slot too: only the pair can keep more than the last
        long a = 0x401000, b = sameSlots(a), c = sameSlots(b);
        long shape = SiteTails.shape(8, 1);
        tails.add(a, shape, -1, A);
        tails.add(b, shape, -1, B);
        tails.find(a, shape, -1);
        tails.add(c, shape, -1, C);
        assertNull(tails.find(b, shape, -1));
        assertArrayEquals(A, tails.find(a, shape, -1));
        assertArrayEquals(C, tails.find(c, shape, -1));
    }

    @Test
    void twoSitesOfOneFrontSlotTakingTurnsAreFoundInTheTable() {
        SiteTails tails = new SiteTails();
        long a = 0x401000, b = a + 1;
        while (SiteTails.front(b) != SiteTails.front(a) || SiteTails.slot(b) == SiteTails.slot(a)) b++;
        long shape = SiteTails.shape(8, 1);
        tails.add(a, shape, -1, A);
        tails.add(b, shape, -1, B);
        for (int turn = 0; turn < 3; turn++) {
            assertArrayEquals(A, tails.find(a, shape, -1));
            assertArrayEquals(B, tails.find(b, shape, -1));
        }
    }

    @Test
    void keyedByShapeWeightAndStamp() {
        SiteTails tails = new SiteTails();
        long a = 0x401000;
        tails.add(a, SiteTails.shape(8, 1), 3, A);
        assertNull(tails.find(a, SiteTails.shape(4, 1), 3));
        assertNull(tails.find(a, SiteTails.shape(8, 2), 3));
        assertNull(tails.find(a, SiteTails.shape(8, 1), -1));
        assertArrayEquals(A, tails.find(a, SiteTails.shape(8, 1), 3));
        tails.namesChanged();
        assertNull(tails.find(a, SiteTails.shape(8, 1), 3));
    }
}
