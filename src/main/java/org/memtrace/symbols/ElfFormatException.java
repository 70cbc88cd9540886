package org.memtrace.symbols;

import java.io.IOException;

/** A file is not a well-formed ELF64 little-endian x86-64 object; the message is one line naming the file and the flaw. */
public final class ElfFormatException extends IOException {
    public ElfFormatException(String message) {
        super(message);
    }
}
