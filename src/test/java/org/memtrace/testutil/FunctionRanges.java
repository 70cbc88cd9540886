package org.memtrace.testutil;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The code ranges of some functions of a linked program, from {@code nm -S}: a comparison with Lackey keeps only
 * accesses whose instruction lies in the program's own functions (the loader's and libc's differ by design).
 */
public record FunctionRanges(List<long[]> ranges) {

    /** The [start, end) of every function named; fails unless nm lists each of them exactly once. */
    public static FunctionRanges of(Path program, List<String> functions) throws Exception {
        return new FunctionRanges(List.copyOf(named(program, functions).values()));
    }

    /** The [start, end) of every function named, by name; fails unless nm lists each of them exactly once. */
    public static Map<String, long[]> named(Path program, List<String> functions) throws Exception {
        Map<String, long[]> ranges = new TreeMap<>();
        int listed = 0;
        for (String l : Gcc.run(List.of("nm", "-S", program.toString())).lines().toList()) {
            String[] f = l.split(" ");
            if (f.length == 4 && (f[2].equals("T") || f[2].equals("t")) && functions.contains(f[3])) {
                long start = Long.parseUnsignedLong(f[0], 16);
                ranges.put(f[3], new long[] {start, start + Long.parseUnsignedLong(f[1], 16)});
                listed++;
            }
        }
        if (listed != functions.size() || ranges.size() != functions.size()) {
            throw new AssertionError("nm -S " + program + " lists " + listed + " of " + functions);
        }
        return ranges;
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
