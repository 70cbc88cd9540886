package org.memtrace.select;

/** An element of the candidate set C_b: the representative of an equivalence class, with its value. */
public record Candidate(EquivalenceClass equivalenceClass, InstrumentationValue value) {
    public MemoryReference representative() {
        return equivalenceClass.representative();
    }

    public int classSize() {
        return equivalenceClass.size();
    }
}
