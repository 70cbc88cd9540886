/**
 * A set-associative cache model: levels, geometries, replacement policies (LRU, FIFO, random, tree pseudo-LRU)
 * and their statistics, write-allocate and write-back, as memtrace cachesim runs them over a trace's accesses.
 * It must not depend on any other memtrace package: it sees addresses and sizes, never events, names or files.
 */
package org.memtrace.cache;
