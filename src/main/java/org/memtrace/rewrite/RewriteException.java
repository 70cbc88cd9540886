package org.memtrace.rewrite;

/** A module that cannot be rewritten, said in one line (the run then stops before the program starts). */
public final class RewriteException extends Exception {
    public RewriteException(String message) { super(message); }
}
