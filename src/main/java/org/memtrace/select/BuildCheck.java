package org.memtrace.select;

import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * What {@code memtrace analyze} says about a file built by {@code memtrace cc}: the options the build
 * recorded and, when the analysis ran with exactly those options, whether the instructions the probes
 * record are the ones the selection names (they should be: both come from this package, on the same code).
 *
 * @param options      the recorded option strings, one per distinct set; empty when not recorded
 * @param probeSites   probe sites in the analyzed code
 * @param instrumented instructions of the analyzed code that a probe records
 * @param unprobed     analyzed functions with memory references but no probe, left out of the comparison
 * @param comparison   the difference to the selection over the functions with probes
 * @param notCompared  why there is no comparison (empty when there is one)
 */
public record BuildCheck(List<String> options, int probeSites, int instrumented, int unprobed,
                         Optional<Difference> comparison, String notCompared) {

    /**
     * @param selectedWithoutProbe selected instructions no probe records (a conditional rep string
     *                             instruction, a function the rewriter left whole)
     * @param probedNotSelected    recorded instructions the selection does not name
     */
    public record Difference(int selectedWithoutProbe, int probedNotSelected) {
        public boolean none() {
            return selectedWithoutProbe == 0 && probedNotSelected == 0;
        }
    }

    /**
     * Compares the instructions the build instruments with what the selection at {@code omega} chooses:
     * every memory-referencing instruction when the build was not selective, else the representatives.
     */
    public static Difference compare(List<FunctionModel> models, double omega, boolean selective, Set<Long> instrumented) {
        Set<Long> chosen = new HashSet<>();
        for (FunctionModel f : models) {
            for (BlockModel b : f.blocks()) {
                if (selective) {
                    b.select(omega).knapsack().forEach(c -> chosen.add(c.candidate().representative().address()));
                } else {
                    b.references().forEach(r -> chosen.add(r.address()));
                }
            }
        }
        int missing = (int) chosen.stream().filter(a -> !instrumented.contains(a)).count();
        int extra = (int) instrumented.stream().filter(a -> !chosen.contains(a)).count();
        return new Difference(missing, extra);
    }
}
