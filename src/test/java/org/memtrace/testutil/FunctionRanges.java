package org.memtrace.testutil;

import java.nio.file.Path;
import java.util.List;

/**
 * The code ranges of some functions of a linked program, from {@code nm -S}: a comparison with Lackey keeps only
 * accesses whose instruction lies in the program's own functions (the loader's and libc's differ by design).
 */
public record FunctionRanges(List<long[]> ranges) {

    /** The [start, end) of every function named; fails unless nm lists each of them exactly once. */
    public static FunctionRanges of(Path program, List<String> functions) throws Exception {
        String nm = Gcc.run(List.of("nm", "-S", program.toString()));
        List<long[]> ranges = nm.lines().map(l -> l.split(" "))
                .filter(f -> f.length == 4 && (f[2].equals("T") || f[2].equals("t")) && functions.contains(f[3]))
                .map(f -> {
                    long start = Long.parseUnsignedLong(f[0], 16);
                    return new long[] {start, start + Long.parseUnsignedLong(f[1], 16)};
                }).toList();
        if (ranges.size() != functions.size()) {
            throw new AssertionError("nm -S " + program + " lists " + ranges.size() + " of " + functions);
        }
        return new FunctionRanges(ranges);
    }

    public boolean contains(long ip) {
        for (long[] r : ranges) {
            if (ip >= r[0] && ip < r[1]) {
                return true;
            }
        }
        return false;
    }
}
