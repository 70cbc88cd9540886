package org.memtrace.skeleton;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.memtrace.event.Event;
import org.memtrace.mtr.MtrReader;
import org.memtrace.mtr.SkeletonTable;

/**
 * Writes what the emitted program cannot compute, in the order the reader delivers it (docs/skeleton-c.md,
 * "The input"): logged accesses by site, the loop runs with their logged values, block operations, and a
 * thread record whenever the delivering thread changes. Computed accesses are left out: the program's
 * loops regenerate them. Collects the sites and loops the program's tables list, in order of first use.
 */
final class LoggedInput implements Consumer<Event>, MtrReader.Accesses, MtrReader.LoopRecords {
    static final int LOGGED = 0, THREAD = 1, RUN = 2, MARKER = 3, BLOCK = 4, RETURN = 5;
    static final int EXITED = 0, SIDE_EXIT = 1;

    /** A loop as its file describes it, loaded at {@code bias}; {@code runs} counts its runs in the trace. */
    static final class Placement {
        final SkeletonTable.Loop loop;
        final long bias;
        final int index;
        long runs;
        /** The entry values of its previous run: the input holds each run's differences to them. */
        final long[] previous;
        /** The instructions of its logged positions, and of those that are calls, in this run of the program. */
        final Set<Long> own = new HashSet<>(), calls = new HashSet<>();

        Placement(SkeletonTable.Loop loop, long bias, int index) {
            this.loop = loop;
            this.bias = bias;
            this.index = index;
            this.previous = new long[loop.steps().length];
            for (SkeletonTable.Item it : loop.items()) {
                if (it.computed()) continue;
                own.add(it.insn() + bias);
                if (it.call()) calls.add(it.insn() + bias);
            }
        }
    }

    private record Key(SkeletonTable.Loop loop, long bias) {}

    /** One thread's loop run whose header is written once all its entry values are known. */
    private static final class Run {
        final int tid;
        final Placement loop;
        final long[] values;
        int seen;
        boolean headerWritten;
        /** Its end field's run number in the input. */
        int number;
        /** Its last record was a call's: the callee's records follow, up to the loop's own next record. */
        boolean inCall;

        Run(int tid, Placement loop) {
            this.tid = tid;
            this.loop = loop;
            this.values = new long[loop.loop.steps().length];
        }
    }

    private final InputWriter out;
    private final Map<Event.ProbeSite, Integer> siteIndex = new IdentityHashMap<>();
    final List<Event.ProbeSite> sites = new ArrayList<>();
    private long[] lastAddress = new long[64];
    private final Map<Key, Placement> loopIndex = new HashMap<>();
    final List<Placement> loops = new ArrayList<>();
    private final Map<Long, String> modules = new HashMap<>();
    private final TreeMap<Long, String> fileStarts = new TreeMap<>();
    /** The open runs, innermost last: a run its body's call made is nested in the caller's. */
    private final ArrayDeque<Run> open = new ArrayDeque<>();
    private long thread = -1;
    final Set<Integer> threads = new HashSet<>();
    long logged, computed, blocks;
    /** The first reason the input cannot stand for the trace; null while it can. */
    String problem;

    LoggedInput(InputWriter out) { this.out = out; }

    @Override
    public void access(int tid, long address, Event.ProbeSite site) {
        if (site.computed()) {
            computed++;
            return;
        }
        logged++;
        Integer known = siteIndex.get(site);
        int s;
        if (known == null) {
            s = sites.size();
            siteIndex.put(site, s);
            sites.add(site);
            if (s == lastAddress.length) lastAddress = Arrays.copyOf(lastAddress, 2 * s);
        } else {
            s = known;
        }
        try {
            to(tid);
            Run r = open.peekLast();
            if (r != null && r.tid == tid && r.headerWritten) {
                if (r.inCall && r.loop.own.contains(site.ip())) returned(r);
                if (!r.inCall && r.loop.calls.contains(site.ip())) r.inCall = true;
            }
            out.varint((long) s << 3 | LOGGED);
            long d = address - lastAddress[s];
            out.varint(d << 1 ^ d >> 63);
            lastAddress[s] = address;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The call the run's body made has returned: the loop's own records go on. */
    private void returned(Run r) throws IOException {
        r.inCall = false;
        out.varint(RETURN);
    }

    @Override
    public void entry(int tid, SkeletonTable.Loop loop, long bias, int slot, long value) {
        if (slot == 0) {
            Run caller = open.peekLast();
            if (caller != null && !(caller.tid == tid && caller.inCall))
                fail("a loop run of thread " + caller.tid + " starts before the previous one ended");
            Placement p = loopIndex.computeIfAbsent(new Key(loop, bias), k -> {
                Placement n = new Placement(loop, bias, loops.size());
                loops.add(n);
                return n;
            });
            p.runs++;
            try {
                to(tid);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            open.addLast(new Run(tid, p));
        }
        Run r = open.peekLast();
        if (r == null || r.tid != tid || r.headerWritten) {
            fail("an entry value of a loop comes outside its run's entry");
            return;
        }
        r.values[slot] = value;
        r.seen |= 1 << slot;
    }

    @Override
    public void marker(int tid, int marker, long value) {
        Run r = body(tid);
        if (r == null) return;
        try {
            if (r.inCall) returned(r);
            out.varint((long) marker << 3 | MARKER);
            out.varint(value);
            if (!r.loop.loop.markerEnds()[marker]) return;
            // a side exit: the run ends in the iteration the trip register's value names
            SkeletonTable.Loop l = r.loop.loop;
            int trip = l.tripSlot();
            long step = step(l, r.values, trip);
            long distance = value - r.values[trip] - (l.markerPhase()[marker] ? step : 0);
            out.end(r.number, SIDE_EXIT, distance / step + 1);
            open.removeLast();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void exit(int tid, long value) {
        Run r = body(tid);
        if (r == null) return;
        try {
            if (r.inCall) returned(r);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        long distance = value - r.values[r.loop.loop.tripSlot()];
        out.end(r.number, EXITED, distance << 1 ^ distance >> 63);
        open.removeLast();
    }

    /**
     * The block operations, which the program expands as the exports do; the modules and file mappings, to
     * name the loops' functions. No other event carries an access.
     */
    @Override
    public void accept(Event e) {
        if (e instanceof Event.Module m) modules.putIfAbsent(m.loadBias(), m.path());
        if (e instanceof Event.Mapping m && m.offset() == 0 && !m.path().isEmpty() && !m.path().startsWith("["))
            fileStarts.putIfAbsent(m.start(), m.path());
        if (!(e instanceof Event.Block b)) return;
        blocks++;
        Run r = open.peekLast();
        if (r != null && r.tid == b.tid() && !r.inCall) fail("a block operation inside a loop run of thread " + b.tid());
        try {
            to(b.tid());
            out.varint((long) b.op().ordinal() << 3 | BLOCK);
            out.varint(b.destination());
            out.varint(b.source());
            out.varint(b.length());
        } catch (IOException x) {
            throw new UncheckedIOException(x);
        }
    }

    /**
     * The file loaded at {@code bias}, as the reader finds it: the loader names the main program "", the file
     * mapped at offset 0 at or above its bias is it. Null when the trace does not say.
     */
    String file(long bias) {
        String path = modules.get(bias);
        if (path != null && !path.isEmpty()) return path;
        Map.Entry<Long, String> e = fileStarts.ceilingEntry(bias);
        return e == null ? null : e.getValue();
    }

    /** The trace has ended. */
    void finish() {
        if (!open.isEmpty()) fail("thread " + open.peekLast().tid + "'s last loop run has no exit record");
    }

    /** A register's step per iteration: its constant, plus the entry value of the register it names. */
    static long step(SkeletonTable.Loop loop, long[] values, int slot) {
        int from = loop.stepSlots()[slot];
        return loop.steps()[slot] + (from == SkeletonTable.NONE ? 0 : values[from]);
    }

    /** The open run of thread {@code tid}, its header written; null (and a problem) without one. */
    private Run body(int tid) {
        Run r = open.peekLast();
        if (r == null || r.tid != tid) {
            fail("a loop record of thread " + tid + " outside its run");
            return null;
        }
        try {
            header(r);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return r;
    }

    private void header(Run r) throws IOException {
        if (r.headerWritten) return;
        r.headerWritten = true;
        if (r.seen != (1 << r.values.length) - 1) fail("a loop run lacks entry values");
        // a loop entered in the middle: the program counts from the registers a whole first iteration would have
        // begun with, as the reader does (steps come from slots no update moves, so the order does not matter)
        SkeletonTable.Loop l = r.loop.loop;
        long[] entered = r.values.clone();
        for (int s = 0; s < r.values.length; s++) r.values[s] = l.wholeIterationStart(s, entered[s], step(l, entered, s));
        out.varint((long) r.loop.index << 3 | RUN);
        r.number = out.reserve();
        long[] previous = r.loop.previous;
        for (int s = 0; s < r.values.length; s++) {
            long d = r.values[s] - previous[s];
            out.varint(d << 1 ^ d >> 63);
            previous[s] = r.values[s];
        }
    }

    /**
     * Records from thread {@code tid} follow. The reader delivers a thread's records between two of its events
     * together unless more than 2^20 of them are held; a loop run whose body calls a function may span the
     * events of its callee (malloc), and other threads' records may come there. The program follows one
     * thread's runs at a time: another thread's records inside an open run are refused.
     */
    private void to(int tid) throws IOException {
        Run r = open.peekLast();
        if (r != null) {
            if (r.tid != tid) fail("thread " + tid + "'s records come inside a loop run of thread " + r.tid
                    + (r.inCall ? " (at an event of a function its body called)" : " (more than 2^20 records between two events of a thread)"));
            else header(r);
        }
        if (tid == thread) return;
        thread = tid;
        threads.add(tid);
        out.varint((long) tid << 3 | THREAD);
    }

    private void fail(String why) {
        if (problem == null) problem = why;
    }
}
