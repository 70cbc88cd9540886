package org.memtrace.select;

/** The file is not an ELF object memtrace can analyze; the message says why, for one line on stderr. */
public final class ElfFormatException extends Exception {
    public ElfFormatException(String message) {
        super(message, null, false, false);
    }
}
