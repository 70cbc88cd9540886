package org.memtrace.select;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.List;

/**
 * The candidate set C_b of a block (§III-C): one representative per equivalence class, valued by Eq. 2 and
 * ordered from the most to the least valuable, with the pairs at distance zero. Building it costs m²
 * applications of the distance function.
 */
public final class CandidateSet {
    private static final Comparator<Candidate> MOST_VALUABLE_FIRST = Comparator
            .comparing(Candidate::value).reversed()
            .thenComparingLong(c -> c.representative().address());

    private final List<Candidate> candidates;
    private final BitSet[] zeroDistance;

    public CandidateSet(List<EquivalenceClass> classes, ExpressionDistance distance) {
        int m = classes.size();
        long[] sums = new long[m];
        int[] peers = new int[m];
        BitSet[] zero = new BitSet[m];
        for (int a = 0; a < m; a++) {
            zero[a] = new BitSet(m);
        }
        for (int a = 0; a < m; a++) {
            BidExpression e = classes.get(a).expression();
            for (int b = a + 1; b < m; b++) {
                BidExpression f = classes.get(b).expression();
                if (ExpressionDistance.comparable(e, f)) {
                    int d = distance.distance(e, f);
                    sums[a] += d;
                    sums[b] += d;
                    peers[a]++;
                    peers[b]++;
                    if (d == 0) {
                        zero[a].set(b);
                        zero[b].set(a);
                    }
                }
            }
        }
        var valued = new ArrayList<Candidate>(m);
        for (int a = 0; a < m; a++) {
            // An expression with no peer of its template is not near anything: its mean distance is 0 only
            // for want of a better number, and it still ranks by its class size first.
            double mean = peers[a] == 0 ? 0 : (double) sums[a] / peers[a];
            valued.add(new Candidate(classes.get(a), new InstrumentationValue(classes.get(a).size(), mean)));
        }
        var order = new ArrayList<Integer>(m);
        for (int a = 0; a < m; a++) {
            order.add(a);
        }
        order.sort(Comparator.comparing(valued::get, MOST_VALUABLE_FIRST));
        candidates = order.stream().map(valued::get).toList();
        zeroDistance = new BitSet[m];
        for (int rank = 0; rank < m; rank++) {
            BitSet renumbered = new BitSet(m);
            BitSet original = zero[order.get(rank)];
            for (int rank2 = 0; rank2 < m; rank2++) {
                if (original.get(order.get(rank2))) {
                    renumbered.set(rank2);
                }
            }
            zeroDistance[rank] = renumbered;
        }
    }

    /** The candidates, most valuable first; indices into this list are the ranks the other methods take. */
    public List<Candidate> candidates() {
        return candidates;
    }

    public int size() {
        return candidates.size();
    }

    public boolean atDistanceZero(int rank, int otherRank) {
        return zeroDistance[rank].get(otherRank);
    }
}
