package org.memtrace.select;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What §III-B and §III-C derive from one block, independent of ω: its memory references E_b, their
 * equivalence classes under Eq. 1 and the valued candidate set C_b.
 */
public record BlockModel(BasicBlock block, List<MemoryReference> references, List<EquivalenceClass> classes,
                         CandidateSet candidates) {

    public BlockModel {
        references = List.copyOf(references);
        classes = List.copyOf(classes);
    }

    static BlockModel of(BasicBlock block, List<MemoryReference> references, ExpressionDistance distance) {
        List<EquivalenceClass> classes = classify(references);
        return new BlockModel(block, references, classes, new CandidateSet(classes, distance));
    }

    /** Eq. 1 is plain equality of the expression records (template, parameters, incarnations). */
    static List<EquivalenceClass> classify(List<MemoryReference> references) {
        Map<BidExpression, List<MemoryReference>> byExpression = new LinkedHashMap<>();
        for (MemoryReference r : references) {
            byExpression.computeIfAbsent(r.expression(), e -> new ArrayList<>()).add(r);
        }
        return byExpression.entrySet().stream().map(e -> new EquivalenceClass(e.getKey(), e.getValue())).toList();
    }

    public Selection select(double omega) {
        return KnapsackSelection.select(candidates, omega, references.size());
    }
}
