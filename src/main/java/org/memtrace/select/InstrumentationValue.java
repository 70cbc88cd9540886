package org.memtrace.select;

/**
 * The value of instrumenting a candidate (Eq. 2): first the number of accesses it stands for, then, for
 * equal counts, how far on average it is from the other candidates of its template, since a distant
 * expression is less likely to hit a chunk another instrumented instruction already reports.
 */
public record InstrumentationValue(int classSize, double meanDistance) implements Comparable<InstrumentationValue> {

    @Override
    public int compareTo(InstrumentationValue o) {
        int c = Integer.compare(classSize, o.classSize);
        return c != 0 ? c : Double.compare(meanDistance, o.meanDistance);
    }

    @Override
    public String toString() {
        return "⟨%d, %.2f⟩".formatted(classSize, meanDistance);
    }
}
