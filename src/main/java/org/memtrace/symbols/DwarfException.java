package org.memtrace.symbols;

/** A flaw in DWARF data; the message says what and where. Readers turn it into "no information", never a crash. */
final class DwarfException extends Exception {
    DwarfException(String message) {
        super(message);
    }
}
