package org.memtrace.select;

/**
 * The knobs of the selection: the chunk size C (tracing granularity), the score triplet, and whether stack
 * accesses count as memory references.
 */
public record AnalysisOptions(long chunkSize, ScoreTriplet scores, boolean includeStack) {
    public static final long DEFAULT_CHUNK = 4096;
    public static final AnalysisOptions DEFAULTS = new AnalysisOptions(DEFAULT_CHUNK, ScoreTriplet.DEFAULT, false);

    public AnalysisOptions {
        if (chunkSize <= 0) {
            throw new IllegalArgumentException("chunk size must be positive, not " + chunkSize);
        }
    }

    public ExpressionDistance distance() {
        return new ExpressionDistance(scores, chunkSize);
    }
}
