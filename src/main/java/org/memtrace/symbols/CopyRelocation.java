package org.memtrace.symbols;

/**
 * An R_X86_64_COPY relocation: at start-up the loader copies a library's object ({@code stdout}) into the
 * executable at {@code address}, and every module then uses that copy.
 */
public record CopyRelocation(long address, String name, long size) {}
