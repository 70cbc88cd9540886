package org.memtrace.analysis;

import org.memtrace.event.Event;
import org.memtrace.trace.AccessInterpreter;
import org.memtrace.trace.EventConsumer;
import org.memtrace.trace.InstructionShapes;
import org.memtrace.trace.Naming;
import org.memtrace.trace.TracedAccess;

/**
 * The step from events to what {@link AccessAnalysis} consumes: keeps the naming current, turns faults and probe
 * records into accesses and numbers them as the MadT text trace does (every load, store, block operation and allocator
 * call gets the next number, except free(NULL), which prints no line). Allocator calls reach the analysis
 * with the block's name, after the naming has seen them.
 */
public final class Interpretation implements EventConsumer {
    private final Naming naming;
    private final AccessInterpreter accesses;
    private final AccessAnalysis analysis;
    private long sequence;

    public Interpretation(Naming naming, InstructionShapes shapes, AccessAnalysis analysis) {
        this.naming = naming;
        this.accesses = new AccessInterpreter(shapes);
        this.analysis = analysis;
    }

    @Override
    public void accept(Event event) {
        accesses.observe(event);
        naming.observe(event);
        switch (event) {
            case Event.Access a -> {
                for (TracedAccess t : accesses.interpret(a)) analysis.access(sequence++, t);
            }
            case Event.Probe p -> {
                for (TracedAccess t : accesses.interpret(p)) analysis.access(sequence++, t);
            }
            case Event.Block b -> analysis.block(sequence++, b);
            case Event.Alloc a -> {
                boolean printed = a.function() != Event.AllocFunction.FREE || a.arg(0) != 0;
                analysis.allocation(printed ? sequence++ : -1, a, naming.block(a));
            }
            default -> analysis.namesChanged();
        }
    }

    /** Numbered lines so far. */
    public long events() { return sequence; }
}
