package org.memtrace.format;

/**
 * How a {@code memtrace_skel} record names another loop record (docs/compiled-in.md, "Loop nests"): an outer loop's
 * kind-4 item names its inner loop by number. The rewriter writes one object file's part of the section; the linker
 * puts the parts of every object of a program one after the other, in link order, and the reader reads them as one
 * section. A number therefore counts within its own part: the inner loop's index among the loop records (types 1
 * and 3–5, nested or not; declined records do not count) of the part it is in, from 0, the part opening with the
 * version record. Kept in one place so the writer ({@code instrument.SkeletonWriter}) and the reader
 * ({@code mtr.SkeletonTable}) cannot count differently: a program of two objects with nests was unreadable when the
 * reader counted across the whole section (issue 27).
 */
public final class SkeletonParts {
    private SkeletonParts() {}

    /** The type of the version record, which opens each object file's part of the section: the count starts again. */
    public static final int VERSION_RECORD = 6;

    /**
     * The number a nest writes for its inner loop: {@code loop}, the inner loop's index among the loop records
     * counted from the section's start, less {@code partStart}, the index of its part's first loop record (0 for
     * the rewriter, which writes one part).
     */
    public static long number(int loop, int partStart) {
        if (loop < partStart) throw new IllegalArgumentException("loop record " + loop + " lies before its part, at " + partStart);
        return loop - partStart;
    }

    /**
     * The loop record, counted from the section's start, that a nest in the part whose first loop record is
     * {@code partStart} names by {@code number}; -1 when it names none of the part's records read so far
     * ({@code read}: the loop records before the nest's own outer loop, whose inner loops come first).
     */
    public static int loop(long number, int partStart, int read) {
        return number < 0 || number >= read - partStart ? -1 : (int) (partStart + number);
    }
}
