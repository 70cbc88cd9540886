package org.memtrace.x86;

/**
 * The x86 decoder cannot be used: libZydis is missing, has another major version, or does not lay out its
 * structures the way this binding was written for. The message is a complete, user-facing line.
 */
public final class ZydisUnavailableException extends RuntimeException {
    public ZydisUnavailableException(String message) {
        super(message, null, false, false);
    }

    public ZydisUnavailableException(String message, Throwable cause) {
        super(message, cause, false, false);
    }
}
