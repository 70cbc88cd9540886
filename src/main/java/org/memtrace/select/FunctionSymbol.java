package org.memtrace.select;

/** A function of the code section: its symbol-table name, link-time address and size in bytes. */
public record FunctionSymbol(String name, long address, long size) {
    public long end() {
        return address + size;
    }
}
