package org.memtrace.analysis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.memtrace.event.Event;
import org.memtrace.trace.AccessInterpreter;
import org.memtrace.trace.EventConsumer;
import org.memtrace.trace.InstructionShapes;
import org.memtrace.trace.Naming;

/**
 * The one interpretation stage between the event stream and the analyses (drcachesim's shape): it keeps
 * the naming current, turns faults and probe records (by their fields, see {@link #fault} and {@link #probe})
 * into {@link Access}es and numbers them as the MadT
 * text trace does (every load, store, block operation and allocator call gets the next number, except
 * free(NULL), which prints no line), and hands each to every analysis in the order given. Every event is
 * interpreted once, whatever the number of analyses; names are resolved only when an analysis asks, through
 * one shared {@link Names} cache.
 */
public final class Interpretation implements EventConsumer {
    private final Naming naming;
    /** Allocation and free stacks, named when first shown or before the modules change (StackTable.nameAll). */
    private final StackTable stacks;
    private final Names names;
    /** {@link Names#dataChanged}, made once: not a method reference object per allocation. */
    private final Naming.Ranges dataChanged;
    private final AccessInterpreter faults;
    /** The analyses still running: one that threw is dropped, the others go on. */
    private Analysis[] analyses;
    /**
     * Of {@link #analyses}, those that take probe records ({@link Analysis#probe} overridden: the summary, the
     * report): the others are not called once per record for nothing.
     */
    private Analysis[] probers;
    private final List<String> crashes = new ArrayList<>();
    private final Access access;
    private long sequence, records;
    /**
     * Fault mode's access stacks: each thread's last MT_CONTEXT, which its accesses have until the next; the
     * last thread's looked up once (a run of one thread's faults asks no map).
     */
    private final Map<Integer, long[]> contexts = new HashMap<>();
    private int contextTid;
    private long[] context;
    /** Rewrite mode's and cc builds' access stacks, per thread: the place that trapped and the records it covers so far. */
    private final Map<Integer, PlaceStack> placeStacks = new HashMap<>();

    public Interpretation(Naming naming, InstructionShapes shapes, List<? extends Analysis> analyses) {
        this.naming = naming;
        this.stacks = new StackTable(naming::frames, naming::frame);
        this.names = new Names(naming);
        this.dataChanged = names::dataChanged;
        this.faults = new AccessInterpreter(shapes);
        this.analyses = analyses.toArray(Analysis[]::new);
        this.probers = Arrays.stream(this.analyses).filter(Interpretation::takesProbes).toArray(Analysis[]::new);
        this.access = new Access(names);
    }

    @Override
    public void accept(Event event) {
        // nearly every event is a fault or a probe record: no type switch for them
        if (event instanceof Event.Access a) {
            fault(a.tid(), a.ip(), a.address(), a.write(), a.sameStep());
            return;
        }
        if (event instanceof Event.Probe p) {
            probe(p.tid(), p.address(), p.site());
            return;
        }
        records++;
        switch (event) {
            case Event.Block b -> {
                events(b);
                long n = sequence++;
                each(x -> x.block(n, b));
            }
            case Event.Alloc a -> allocation(a);
            case Event.Context c when c.instruction() != Event.Context.ANY ->
                placeStacks.put(c.tid(), new PlaceStack(c.instruction(), function(c.instruction()), c.callers()));
            case Event.Context c -> {
                contexts.put(c.tid(), c.callers());
                if (c.tid() == contextTid) context = c.callers();
            }
            default -> other(event);
        }
    }

    /** A fault by its fields: a saved stream's reader hands them so, and no event object is made per fault. */
    @Override
    public void fault(int tid, long ip, long address, boolean write, boolean sameStep) {
        records++;
        for (Analysis x : analyses) {
            try {
                x.fault(tid, ip, address, write);
            } catch (RuntimeException e) {
                crashed(x, e);
            }
        }
        int accesses = faults.interpret(tid, ip, address, sameStep);
        if (accesses == AccessInterpreter.NONE) return;
        boolean rmw = accesses == AccessInterpreter.LOAD_AND_STORE;
        if (tid != contextTid) {
            contextTid = tid;
            context = contexts.get(tid);
        }
        deliver(access.set(sequence++, tid, ip, address, faults.size(), write && !rmw, Access.UNWEIGHTED, context));
        if (rmw) deliver(access.asStore(sequence++));
    }

    /**
     * A probe record by its fields: a {@code .mtr} file's reader hands them so, and no event object is made
     * per access. A modify is a load then a store, as for faults; in a selective (ma/aia) build each line
     * carries the site's weight.
     */
    @Override
    public void probe(int tid, long address, Event.ProbeSite site) {
        records++;
        for (Analysis x : probers) {
            try {
                x.probe(tid, address, site);
            } catch (RuntimeException e) {
                crashed(x, e);
            }
        }
        int weight = site.logged() ? Access.UNWEIGHTED : site.weight();
        boolean store = site.kind() == Event.ProbeKind.STORE;
        long[] callers = placeStacks.isEmpty() ? null : placeStack(tid, site);
        deliver(access.set(sequence++, tid, site.ip(), address, site.size(), store, weight, callers));
        if (site.kind() == Event.ProbeKind.MODIFY) deliver(access.asStore(sequence++));
    }

    /**
     * Rewrite mode's or a cc build's stack of a probe record (docs/stacks.md, "Access stacks"): the callers sent
     * when the thread trapped at a place (a trampoline, a compiled-in probe) hold for the records that follow
     * while they go forward in the same function from that place: the place's trampoline or probe group, and
     * code after it in the same call. A record that goes back (a loop, the
     * same instruction again, a call of the function again) or leaves the function ends them: never a stack
     * that is not the access's own.
     */
    private long[] placeStack(int tid, Event.ProbeSite site) {
        PlaceStack s = placeStacks.get(tid);
        if (s == null) return null;
        long ip = site.ip();
        boolean onward = ip > s.last || ip == s.last && site != s.lastSite && s.lastSite != null;
        if (!onward || ip < s.instruction || s.function == null || !s.function.equals(function(ip))) {
            placeStacks.remove(tid);
            return null;
        }
        s.last = ip;
        s.lastSite = site;
        return s.callers;
    }

    /** The function an instruction lies in, as the trace names code ({@code peek} of {@code peek+16}); null: no symbol. */
    private String function(long ip) {
        String code = naming.code(ip);
        int plus = code == null ? -1 : code.lastIndexOf('+');
        return plus <= 0 ? null : code.substring(0, plus);
    }

    /** A place's stack and how far its records have gone ({@link #placeStack}). */
    private static final class PlaceStack {
        final long instruction;
        final String function;
        final long[] callers;
        long last;
        Event.ProbeSite lastSite;

        PlaceStack(long instruction, String function, long[] callers) {
            this.instruction = instruction;
            this.function = function;
            this.callers = callers;
            this.last = instruction - 1;
        }
    }

    private void deliver(Access a) {
        for (Analysis x : analyses) {
            try {
                x.access(a);
            } catch (RuntimeException e) {
                crashed(x, e);
            }
        }
    }

    private void events(Event event) {
        each(x -> x.event(event));
    }

    /**
     * Calls every analysis still running, each failure going to {@link #crashed}. For the events that are not
     * accesses: the per-access loops (access, fault) are written out, so that no lambda stands on them.
     */
    private void each(Consumer<Analysis> call) {
        for (Analysis x : analyses) {
            try {
                call.accept(x);
            } catch (RuntimeException e) {
                crashed(x, e);
            }
        }
    }

    /**
     * An analysis threw: it gets nothing more (not even {@code finish}), its failure is one of {@link #finish}'s
     * sentences, and the others go on. The loop that called it keeps iterating over the array it started with.
     */
    private void crashed(Analysis x, RuntimeException e) {
        crashes.add(sentence(x, e));
        analyses = Arrays.stream(analyses).filter(a -> a != x).toArray(Analysis[]::new);
        probers = Arrays.stream(probers).filter(a -> a != x).toArray(Analysis[]::new);
    }

    /** Whether the analysis overrides {@link Analysis#probe}. */
    private static boolean takesProbes(Analysis x) {
        try {
            return x.getClass().getMethod("probe", int.class, long.class, Event.ProbeSite.class).getDeclaringClass() != Analysis.class;
        } catch (NoSuchMethodException e) {
            return true;
        }
    }

    private static String sentence(Analysis x, RuntimeException e) {
        Throwable t = e instanceof UncheckedIOException && e.getCause() != null ? e.getCause() : e;
        return x.name() + ": " + (t.getMessage() != null ? t.getMessage() : t.getClass().getSimpleName());
    }

    private void allocation(Event.Alloc a) {
        long old = switch (a.function()) {
            case REALLOC, REALLOCARRAY, MREMAP -> a.arg(0);
            default -> 0;
        };
        // the old block is named as it was before the call
        String previous = old == 0 ? null : naming.data(old);
        naming.observe(a);
        if (!naming.changedByAllocation(dataChanged)) names.heapChanged();
        boolean printed = a.function() != Event.AllocFunction.FREE || a.arg(0) != 0;
        Allocation allocation = new Allocation(printed ? sequence++ : -1, a, naming.block(a), previous, stacks.of(naming.stack(a), a.callers().length > 0));
        events(a);
        each(x -> x.allocation(allocation));
    }

    private void other(Event event) {
        // a module or mapping may change what a code address names: the stacks seen so far keep their names
        if (event instanceof Event.Module || event instanceof Event.Mapping) stacks.nameAll();
        faults.observe(event);
        naming.observe(event);
        names.allChanged();
        events(event);
        each(Analysis::namesChanged);
    }

    /** Events read so far. */
    public long records() { return records; }

    /** Numbered lines so far. */
    public long events() { return sequence; }

    /**
     * Has every analysis write its results, in order. One analysis failing does not keep the others from
     * theirs: the failures' sentences are returned, empty when all went well; an analysis that threw while
     * the trace streamed, or while finishing, is named in its sentence ({@code cachesim: message}).
     */
    public List<String> finish(Ending ending) {
        List<String> problems = new ArrayList<>(crashes);
        for (Analysis x : analyses) {
            try {
                x.finish(ending);
            } catch (IOException e) {
                problems.add(e.getMessage());
            } catch (RuntimeException e) {
                problems.add(sentence(x, e));
            }
        }
        return problems;
    }

    /** Whether every analysis's output is whole. */
    public boolean complete() {
        if (!crashes.isEmpty()) return false;
        for (Analysis x : analyses) if (!x.complete()) return false;
        return true;
    }
}
