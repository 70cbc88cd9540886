package org.memtrace.trace;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.memtrace.event.Event;

/**
 * Turns page faults (and compiled-in probe records) into the loads and stores of the trace. One fault is not always one access: a
 * read-modify-write instruction is a load and a store, and an access straddling a page boundary faults
 * once per page. Writers and the summary each use their own instance so they count the same lines.
 */
public final class AccessInterpreter {
    private final InstructionShapes shapes;
    private final Map<Integer, Fault> lastFault = new HashMap<>();
    private long pageSize = 4096;

    private record Fault(long ip, long address, InstructionShapes.Shape shape) {}

    public AccessInterpreter(InstructionShapes shapes) { this.shapes = shapes; }

    /** Keeps what interpretation depends on (the page size); call with every event. */
    public void observe(Event event) {
        if (event instanceof Event.Hello h && h.pageSize() > 0) pageSize = h.pageSize();
    }

    /** The trace accesses one fault stands for: none, one, or a load and a store. */
    public List<TracedAccess> interpret(Event.Access a) {
        InstructionShapes.Shape shape = shapes.shapeOf(a.ip());
        Fault prev = lastFault.put(a.tid(), new Fault(a.ip(), a.address(), shape));
        if (a.sameStep() && prev != null && prev.ip() == a.ip() && shape.known() && continues(prev, a, shape))
            return List.of();
        int size = shape.size();
        if (shape.readModifyWrite())
            return List.of(new TracedAccess(a.tid(), a.ip(), a.address(), size, false),
                    new TracedAccess(a.tid(), a.ip(), a.address(), size, true));
        return List.of(new TracedAccess(a.tid(), a.ip(), a.address(), size, a.write()));
    }

    /**
     * The trace accesses one probe record stands for: a modify is a load then a store, as for faults. In a
     * selective build (ma/aia site mode) each line carries the site's weight.
     */
    public List<TracedAccess> interpret(Event.Probe p) {
        Event.ProbeSite site = p.site();
        int weight = site.mode() == Event.SelectionMode.LOG ? TracedAccess.UNWEIGHTED : site.weight();
        return switch (site.kind()) {
            case LOAD -> List.of(new TracedAccess(p.tid(), site.ip(), p.address(), site.size(), false, weight));
            case STORE -> List.of(new TracedAccess(p.tid(), site.ip(), p.address(), site.size(), true, weight));
            case MODIFY -> List.of(new TracedAccess(p.tid(), site.ip(), p.address(), site.size(), false, weight),
                    new TracedAccess(p.tid(), site.ip(), p.address(), site.size(), true, weight));
        };
    }

    /**
     * Whether a further fault of the same instruction execution is part of the access already reported:
     * the second page of a straddling access, or the write fault of a read-modify-write at the same address.
     */
    private boolean continues(Fault prev, Event.Access a, InstructionShapes.Shape shape) {
        long boundary = (prev.address() & -pageSize) + pageSize;
        if (a.address() == boundary && prev.address() + shape.size() > boundary) return true;
        return shape.readModifyWrite() && a.address() == prev.address();
    }
}
