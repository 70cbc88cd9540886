package org.memtrace.x86;

/**
 * One memory access an instruction performs, as the dynamic tracer reports it: a read-modify-write
 * ({@code add [rbx], eax}) is one access with both {@code read} and {@code write}, to be written as a load
 * followed by a store.
 *
 * @param implicitStack the push/pop/call/ret stack slot, not an operand in the assembly text
 * @param rep           a rep-prefixed string instruction: the size is per element, the count is rcx
 */
public record MemoryAccess(int sizeBytes, boolean read, boolean write, boolean implicitStack, boolean rep,
                           MemoryOperand operand) {

    public boolean isReadModifyWrite() {
        return read && write;
    }
}
