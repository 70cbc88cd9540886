package org.memtrace.select;

import java.util.List;

/**
 * Totals over many blocks for one ω. The mean accuracies weight each block by its number of memory
 * references n: with static weights (every block run once) that is the share of all accesses traced.
 */
public record AnalysisSummary(double omega, int functions, int blocks, int instructions, int memoryReferences,
                              int classes, int selected, double minimalAccuracy, double alignmentIndependentAccuracy) {

    public static AnalysisSummary of(List<FunctionModel> models, double omega) {
        int blocks = 0, instructions = 0, references = 0, classes = 0, selected = 0;
        long maCovered = 0, aiaCovered = 0;
        for (FunctionModel f : models) {
            instructions += f.instructions();
            for (BlockModel b : f.blocks()) {
                Selection s = b.select(omega);
                blocks++;
                references += b.references().size();
                classes += b.classes().size();
                selected += s.knapsack().size();
                maCovered += s.maCovered();
                aiaCovered += s.aiaCovered();
            }
        }
        double ma = references == 0 ? 1 : (double) maCovered / references;
        double aia = references == 0 ? 1 : (double) aiaCovered / references;
        return new AnalysisSummary(omega, models.size(), blocks, instructions, references, classes, selected, ma, aia);
    }
}
