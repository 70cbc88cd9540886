package org.memtrace.testutil;

import java.util.Map;
import java.util.TreeMap;

/**
 * The memory a process mapped, from its own system calls as each tool logs them (Valgrind's {@code
 * --trace-syscalls=yes}, strace's log of memtrace's run), so that {@link InstructionTally} names an address
 * outside every module by the mapping that holds it rather than by where the mapping lies: Valgrind places
 * mmaps bottom-up from 0x4000000 and its brk elsewhere, natively they go top-down. Every mapping ever made
 * ({@code mmap}, {@code mremap}'s new place, the brk heap from its first address to its highest end) is kept,
 * overlapping ones merged into the first one's identity (a range unmapped and mapped again is the same region:
 * the union does not depend on order, so a log read ahead of the accesses names them alike). An address in
 * none is the main thread's stack (neither log has it) and gets {@link #STACK}.
 */
public final class MappingLog {
    /** The region of an address in no logged mapping: the main thread's stack. */
    public static final int STACK = 0;

    /** start → {end, region id}: disjoint, never adjacent-merged (adjacency is placement). */
    private final TreeMap<Long, long[]> ranges = new TreeMap<>();
    private int next = 1;
    private long brkStart = -1;

    /** What the region of {@code id} is, for a message: the stack, the brk heap or a mapping. */
    public String kind(int id) {
        if (id == STACK) return "stack";
        Map.Entry<Long, long[]> e = brkStart < 0 ? null : ranges.floorEntry(brkStart);
        return e != null && e.getValue()[1] == id ? "brk" : "mmap";
    }

    public int region(long address) {
        Map.Entry<Long, long[]> e = ranges.floorEntry(address);
        return e != null && address < e.getValue()[0] ? (int) e.getValue()[1] : STACK;
    }

    /** Adds [lo, hi), merged with every range it overlaps into the identity of the earliest of them. */
    public void add(long lo, long hi) {
        if (hi <= lo) return;
        long id = next;
        Map.Entry<Long, long[]> e = ranges.floorEntry(lo);
        if (e != null && e.getValue()[0] > lo) lo = e.getKey();
        for (var it = ranges.subMap(lo, true, hi, false).entrySet().iterator(); it.hasNext();) {
            var r = it.next();
            id = Math.min(id, r.getValue()[1]);
            hi = Math.max(hi, r.getValue()[0]);
            it.remove();
        }
        if (id == next) next++;
        ranges.put(lo, new long[] {hi, id});
    }

    /** A brk call's result: the heap is one region, [its first break, the highest break). */
    public void brk(long result) {
        if (brkStart < 0) brkStart = result;
        else add(brkStart, result);
    }

    /**
     * One line of Valgrind's syscall trace, {@code SYSCALL[pid,tid](9) sys_mmap ( 0x0, 8192, 3, 34, 4294967295, 0 ) --> [pre-success] Success(0x4835000)};
     * other lines (and failed calls) are ignored.
     */
    public void valgrindLine(String line) {
        int ok = line.lastIndexOf("Success(0x");
        if (ok < 0) return;
        for (String call : new String[] {"mmap", "mremap", "brk"}) {
            int open = line.indexOf(" sys_" + call + " ( ");
            int close = open < 0 ? -1 : line.indexOf(" )", open);
            if (close < 0) continue;
            long result = Long.parseUnsignedLong(line.substring(ok + 10, line.indexOf(')', ok)), 16);
            record(call, line.substring(open + call.length() + 8, close).split(", "), result);
            return;
        }
    }

    /** One line of {@code strace -f} for the process: {@code PID mmap(NULL, 8192, PROT_READ|…, …, -1, 0) = 0x7f…}. */
    public void straceLine(String line) {
        int eq = line.lastIndexOf(" = 0x");
        int close = line.lastIndexOf(')', eq); // strace pads short calls: "brk(NULL)        = 0x…"
        int open = line.indexOf('(');
        int space = line.indexOf(' ');
        if (eq < 0 || close < 0 || open < 0 || space < 0 || space > open) return;
        long result = Long.parseUnsignedLong(line.substring(eq + 5).split(" ")[0], 16);
        record(line.substring(space + 1, open).strip(), line.substring(open + 1, close).split(", "), result);
    }

    private void record(String call, String[] args, long result) {
        switch (call) {
            case "mmap" -> add(result, result + size(args[1]));
            case "mremap" -> add(result, result + size(args[2]));
            case "brk" -> brk(result);
            default -> { }
        }
    }

    private static long size(String s) {
        s = s.strip();
        long n = s.startsWith("0x") ? Long.parseUnsignedLong(s.substring(2), 16) : Long.parseLong(s);
        return (n + 0xfff) & ~0xfffL;
    }
}
