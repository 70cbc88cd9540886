package org.memtrace.symbols;

/** A program header. Only PT_LOAD matters to naming: it says which virtual addresses the file backs. */
public record ElfSegment(int type, int flags, long offset, long vaddr, long fileSize, long memSize) {

    public static final int PT_LOAD = 1;
    public static final int PT_NOTE = 4;
    public static final int PF_X = 1;

    public boolean isLoad() {
        return type == PT_LOAD;
    }

    public boolean isExecutable() {
        return (flags & PF_X) != 0;
    }

    public boolean contains(long address) {
        return address - vaddr >= 0 && address - vaddr < memSize;
    }
}
