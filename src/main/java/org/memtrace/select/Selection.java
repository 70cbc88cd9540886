package org.memtrace.select;

import java.util.List;

/**
 * The knapsack K_b of a block for one ω, and the accuracy it buys.
 *
 * @param budget     W = ⌈ω·m⌉
 * @param references n, the number of memory-referencing instructions of the block
 */
public record Selection(int budget, int references, List<Choice> knapsack) {

    /**
     * A selected candidate. Under MA it stands for its own class; under AIA also for the classes at
     * distance zero that were not selected and were associated with it (each with one fulcrum only).
     */
    public record Choice(Candidate candidate, List<Candidate> associated) {
        public Choice {
            associated = List.copyOf(associated);
        }

        public int maWeight() {
            return candidate.classSize();
        }

        public int aiaWeight() {
            return candidate.classSize() + associated.stream().mapToInt(Candidate::classSize).sum();
        }
    }

    public Selection {
        knapsack = List.copyOf(knapsack);
    }

    /** Eq. 4; a block without memory references loses nothing, so its accuracy is 1. */
    public double minimalAccuracy() {
        return references == 0 ? 1 : (double) knapsack.stream().mapToInt(Choice::maWeight).sum() / references;
    }

    /** Eq. 5. */
    public double alignmentIndependentAccuracy() {
        return references == 0 ? 1 : (double) knapsack.stream().mapToInt(Choice::aiaWeight).sum() / references;
    }

    public int maCovered() {
        return knapsack.stream().mapToInt(Choice::maWeight).sum();
    }

    public int aiaCovered() {
        return knapsack.stream().mapToInt(Choice::aiaWeight).sum();
    }
}
