package org.memtrace.x86;

/** How an instruction passes control on; the basis of basic-block construction. */
public enum Flow {
    SEQUENTIAL,
    CONDITIONAL_JUMP,
    JUMP,
    CALL,
    RETURN,
    /** syscall, sysenter, int n: the kernel runs and normally comes back to the next instruction. */
    SYSTEM_CALL,
    /** ud2, hlt, int3, int1: execution does not continue at the next instruction in the normal case. */
    TRAP
}
