package org.memtrace.mtr;

/** A .mtr file holds something the runtime cannot have written; the message says what, for one user line. */
public final class MtrFormatException extends Exception {
    public MtrFormatException(String problem) {
        super(problem, null, false, false);
    }
}
