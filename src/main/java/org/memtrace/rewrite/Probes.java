package org.memtrace.rewrite;

/**
 * What a module's trampolines do before the moved instruction runs: record its accesses (the tracing
 * rewrite, docs/rewriting.md), check them against the shadow memory ({@code memtrace run --check --mode
 * rewrite}, docs/check.md; {@link CheckProbe}), or both ({@code --check -o}: the check first, then the record).
 * Each has plans of its own in the cache (the key includes it).
 */
public enum Probes {
    RECORD, CHECK, BOTH;

    boolean records() { return this != CHECK; }

    boolean checks() { return this != RECORD; }
}
