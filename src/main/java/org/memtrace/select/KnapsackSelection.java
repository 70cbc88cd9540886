package org.memtrace.select;

import java.util.ArrayList;
import java.util.List;

/**
 * The iterative (0,1)-knapsack of §III-D. All items weigh one cost unit, so Step B's optimum is the W most
 * valuable items of Ĉ_b in the order of Eq. 2, and the whole selection is a greedy scan of the candidates
 * in decreasing value.
 */
public final class KnapsackSelection {
    /** ω·m is computed in floating point: 0.7·10 is 7.000000000000001, whose ceiling must still be 7. */
    private static final double ROUNDING_SLACK = 1e-9;

    private KnapsackSelection() {
    }

    public static int budget(double omega, int m) {
        if (!(omega >= 0 && omega <= 1)) {
            throw new IllegalArgumentException("omega must be in [0, 1], not " + omega);
        }
        return (int) Math.min(m, Math.ceil(omega * m - ROUNDING_SLACK));
    }

    public static Selection select(CandidateSet set, double omega, int references) {
        int m = set.size();
        int w = budget(omega, m);
        boolean[] taken = new boolean[m];
        List<Integer> knapsack = new ArrayList<>(w);
        while (knapsack.size() < w) {
            // Step A: among the candidates not yet in the knapsack, keep one per group at distance zero,
            // the most valuable one (the scan runs in decreasing value).
            List<Integer> hat = new ArrayList<>();
            for (int c = 0; c < m; c++) {
                if (!taken[c] && !nearAny(set, c, hat)) {
                    hat.add(c);
                }
            }
            // Step B: fill the remaining room with the most valuable of Ĉ_b; Step C: they leave C_b, and the
            // next round may recover what Step A discarded.
            for (int c : hat.subList(0, Math.min(hat.size(), w - knapsack.size()))) {
                taken[c] = true;
                knapsack.add(c);
            }
        }
        knapsack.sort(null); // ranks: most valuable first, so the first fulcrum found is the most valuable
        List<List<Candidate>> associated = new ArrayList<>(knapsack.size());
        for (int k = 0; k < knapsack.size(); k++) {
            associated.add(new ArrayList<>());
        }
        for (int c = 0; c < m; c++) {
            if (taken[c]) {
                continue;
            }
            for (int k = 0; k < knapsack.size(); k++) {
                if (set.atDistanceZero(c, knapsack.get(k))) {
                    associated.get(k).add(set.candidates().get(c));
                    break; // footnote 4: one fulcrum only
                }
            }
        }
        var choices = new ArrayList<Selection.Choice>(knapsack.size());
        for (int k = 0; k < knapsack.size(); k++) {
            choices.add(new Selection.Choice(set.candidates().get(knapsack.get(k)), associated.get(k)));
        }
        return new Selection(w, references, choices);
    }

    private static boolean nearAny(CandidateSet set, int c, List<Integer> group) {
        for (int g : group) {
            if (set.atDistanceZero(c, g)) {
                return true;
            }
        }
        return false;
    }
}
