package org.memtrace.mtr;

import java.util.ArrayDeque;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.memtrace.event.Event;

/**
 * What {@link MtrReader} makes of an access record, by its site: an access (the common record), nothing (a
 * site the linker relaxed), part of a rep string instruction (whose records become {@link Event.Block}s once
 * its count is known), or a skeleton loop's entry value, marker or exit (which {@link LoopReplay} turns into
 * the accesses the loop computed). Apart from the reader so that the merge of the threads' streams does not
 * also carry the state of each thread's open rep instruction and loop run.
 */
final class AccessRecords {
    private final ModuleSites modules;
    /** Where the blocks of rep instructions go, among the events. */
    private final Consumer<? super Event> consumer;
    private final MtrReader.Accesses accesses;
    private final MtrReader.LoopRecords loopRecords;
    private long probes, unknownSites, firstUnknownSite, brokenReps, computed, brokenLoops;
    private long firstBrokenLoop;

    AccessRecords(ModuleSites modules, Consumer<? super Event> consumer, MtrReader.Accesses accesses, MtrReader.LoopRecords loopRecords) {
        this.modules = modules;
        this.consumer = consumer;
        this.accesses = accesses;
        this.loopRecords = loopRecords;
    }

    /** Access records read. */
    long probes() { return probes; }

    /** Accesses skeleton loops computed. */
    long computed() { return computed; }

    /** Adds what was left out (records of unknown sites, broken loop runs, rep instructions without a count) to {@code problems}. */
    void problems(List<String> problems) {
        if (unknownSites > 0)
            problems.add(unknownSites + " access records name a site no site table describes (the first 0x"
                    + Long.toHexString(firstUnknownSite) + "); they are left out");
        if (brokenLoops > 0)
            problems.add(brokenLoops + " skeleton loop runs do not match their records (the first at 0x" + Long.toHexString(firstBrokenLoop)
                    + "); their computed accesses are left out from the mismatch on");
        if (brokenReps > 0) problems.add(brokenReps + " rep string instructions lack their count record; they are left out");
    }

    /** The state of thread {@code tid}'s records, which {@link #access} takes with each. */
    ThreadState thread(int tid) {
        return new ThreadState(tid);
    }

    /** One thread's open rep instruction and loop run. */
    final class ThreadState implements LoopReplay.Sink {
        final int tid;
        SiteTable.Rep rep;
        int repSeen;
        long repDestination, repSource, repCount;
        LoopReplay loop;
        /** This thread's replay of each loop it ran, reused from run to run. */
        private final Map<SkeletonTable.Placed, LoopReplay> replays = new IdentityHashMap<>();
        /** The runs whose body called the function the current run is in, innermost first. */
        final ArrayDeque<LoopReplay> callers = new ArrayDeque<>();

        private ThreadState(int tid) {
            this.tid = tid;
        }

        @Override
        public void computed(long address, Event.ProbeSite site) {
            computed++;
            accesses.access(tid, address, site);
        }

        LoopReplay replay(SkeletonTable.Placed loop) {
            LoopReplay r = replays.computeIfAbsent(loop, LoopReplay::new);
            // a recursive call runs the loop again while its caller's run of it goes on: that run keeps its state
            return (callers.contains(r) ? new LoopReplay(loop) : r).start();
        }
    }

    void access(ThreadState t, long address, long siteAddress) {
        probes++;
        // the common record first, tested directly: a pattern switch dispatches through a bootstrap per record
        Event.ProbeSite plain = modules.access(siteAddress);
        if (plain != null && t.rep == null && t.loop == null) {
            accesses.access(t.tid, address, plain);
            return;
        }
        special(t, address, siteAddress, modules.site(siteAddress));
    }

    /** The rest of {@link #access}, apart so that the common path stays small enough for the JIT to inline. */
    private void special(ThreadState t, long address, long siteAddress, SiteTable.Site site) {
        switch (site) {
            case null -> {
                if (unknownSites++ == 0) firstUnknownSite = siteAddress;
            }
            case SiteTable.Relaxed r -> {
                // an access the linker took away (a TLS resolver push, a GOT load): nothing happened
            }
            case SiteTable.Access a -> {
                finishRep(t);
                if (t.loop != null && !t.loop.callees(a.site().ip()) && !t.loop.logged(a.site().ip(), t)) brokenLoop(t, a.site().ip());
                accesses.access(t.tid, address, a.site());
            }
            case SiteTable.LoopValue v -> {
                finishRep(t);
                if (v.slot() == 0) {
                    if (t.loop != null && t.loop.inCall()) t.callers.push(t.loop); // a run inside a function the loop called
                    else if (t.loop != null) brokenLoop(t, v.loop().loggedIp()[0]);
                    t.loop = t.replay(v.loop());
                } else if (t.loop == null || t.loop.loop != v.loop()) {
                    brokenLoop(t, v.loop().loggedIp()[0]);
                    return;
                }
                t.loop.value(v.slot(), address);
                loopRecords.entry(t.tid, v.source(), v.bias(), v.slot(), address);
            }
            case SiteTable.LoopMarker m -> {
                finishRep(t);
                // without a run (its entry was lost, or it broke already) the exit record counts the loss once
                if (t.loop != null && (t.loop.loop != m.loop() || !t.loop.marker(m.marker(), address, t))) {
                    brokenLoop(t, m.loop().loggedIp()[0]);
                    return;
                }
                if (t.loop != null) loopRecords.marker(t.tid, m.marker(), address);
                if (t.loop != null && t.loop.ends(m.marker())) t.loop = t.callers.poll(); // a side exit: the run is over
            }
            case SiteTable.LoopExit x -> {
                finishRep(t);
                if (t.loop == null || t.loop.loop != x.loop() || !t.loop.exit(address, t)) brokenLoop(t, x.loop().loggedIp()[0]);
                else loopRecords.exit(t.tid, address);
                t.loop = t.callers.poll(); // back in the caller's run, if a loop called this one's function
            }
            case SiteTable.Rep r -> {
                if (t.rep != null && (t.rep.ip() != r.ip() || (t.repSeen & 1 << r.role()) != 0)) finishRep(t);
                t.rep = r;
                t.repSeen |= 1 << r.role();
                switch (r.role()) {
                    case SiteTable.KIND_REP_DESTINATION -> t.repDestination = address;
                    case SiteTable.KIND_REP_SOURCE -> t.repSource = address;
                    default -> t.repCount = address;
                }
                if (t.repSeen == r.roles()) finishRep(t);
            }
        }
    }

    /** A loop run whose records are not what its skeleton says: counted, and the thread goes on without it. */
    private void brokenLoop(ThreadState t, long ip) {
        if (brokenLoops++ == 0) firstBrokenLoop = ip;
        t.loop = null;
        t.callers.clear();
    }

    /** Turns the rep instruction's records into block events; a zero count touched no memory and prints nothing. */
    void finishRep(ThreadState t) {
        SiteTable.Rep r = t.rep;
        if (r == null) return;
        int seen = t.repSeen;
        t.rep = null;
        t.repSeen = 0;
        if ((seen & 1 << SiteTable.KIND_REP_COUNT) == 0) {
            brokenReps++;
            return;
        }
        if (t.repCount == 0) return;
        long length = t.repCount * r.size();
        int tid = t.tid;
        long dst = t.repDestination, src = t.repSource;
        switch (r.op()) {
            case MOVS -> block(tid, Event.BlockOp.COPY, r, dst, src, length, Event.BlockFunction.REP_MOVS);
            case STOS -> block(tid, Event.BlockOp.STORE, r, dst, 0, length, Event.BlockFunction.REP_STOS);
            case LODS -> block(tid, Event.BlockOp.FETCH, r, 0, src, length, Event.BlockFunction.REP_LODS);
            case SCAS -> block(tid, Event.BlockOp.FETCH, r, 0, dst, length, Event.BlockFunction.REP_SCAS);
            case CMPS -> {
                block(tid, Event.BlockOp.FETCH, r, 0, src, length, Event.BlockFunction.REP_CMPS);
                block(tid, Event.BlockOp.FETCH, r, 0, dst, length, Event.BlockFunction.REP_CMPS);
            }
        }
    }

    private void block(int tid, Event.BlockOp op, SiteTable.Rep r, long dst, long src, long length, Event.BlockFunction f) {
        consumer.accept(new Event.Block(tid, op, false, r.ip(), dst, src, length, f.code));
    }
}
