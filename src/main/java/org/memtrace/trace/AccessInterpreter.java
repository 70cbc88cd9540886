package org.memtrace.trace;

import java.util.HashMap;
import java.util.Map;
import org.memtrace.event.Event;

/**
 * Turns page faults into the loads and stores of the trace. One fault is not always one access: a
 * read-modify-write instruction is a load and a store, and an access straddling a page boundary faults
 * once per page. Called for every fault, so it allocates nothing per fault: the last fault of each thread
 * is kept in a mutable slot, the current thread's slot at hand.
 */
public final class AccessInterpreter {
    /** {@link #interpret} results. */
    public static final int NONE = 0, ONE = 1, LOAD_AND_STORE = 2;

    private final InstructionShapes shapes;
    private final Map<Integer, Fault> lastFault = new HashMap<>();
    private int currentTid;
    private Fault current;
    private long pageSize = 4096;
    private int size;

    private static final class Fault {
        long ip, address;
        boolean valid;
    }

    public AccessInterpreter(InstructionShapes shapes) { this.shapes = shapes; }

    /** Keeps what interpretation depends on (the page size); call with every event. */
    public void observe(Event event) {
        if (event instanceof Event.Hello h && h.pageSize() > 0) pageSize = h.pageSize();
    }

    /**
     * How many trace accesses one fault stands for: {@link #NONE} (it continues the access already
     * reported), {@link #ONE} (of the kind the CPU reported) or {@link #LOAD_AND_STORE}; {@link #size} is
     * the operand's size.
     */
    public int interpret(Event.Access a) {
        return interpret(a.tid(), a.ip(), a.address(), a.sameStep());
    }

    /** {@link #interpret(Event.Access)} of a fault given by its fields. */
    public int interpret(int tid, long ip, long address, boolean sameStep) {
        InstructionShapes.Shape shape = shapes.shapeOf(ip);
        Fault prev = faultOf(tid);
        boolean continues = sameStep && prev.valid && prev.ip == ip && shape.known() && continues(prev, address, shape);
        prev.ip = ip;
        prev.address = address;
        prev.valid = true;
        if (continues) return NONE;
        size = shape.size();
        return shape.readModifyWrite() ? LOAD_AND_STORE : ONE;
    }

    /** The operand size of the fault {@link #interpret} was last called with (0 when unknown). */
    public int size() { return size; }

    private Fault faultOf(int tid) {
        if (current != null && tid == currentTid) return current;
        currentTid = tid;
        current = lastFault.computeIfAbsent(tid, t -> new Fault());
        return current;
    }

    /**
     * Whether a further fault of the same instruction execution is part of the access already reported:
     * the second page of a straddling access, or the write fault of a read-modify-write at the same address.
     */
    private boolean continues(Fault prev, long address, InstructionShapes.Shape shape) {
        long boundary = (prev.address & -pageSize) + pageSize;
        if (address == boundary && prev.address + shape.size() > boundary) return true;
        return shape.readModifyWrite() && address == prev.address;
    }
}
