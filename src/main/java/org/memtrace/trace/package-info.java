/**
 * The contracts between the recorders and the interpretation: the {@link org.memtrace.trace.EventConsumer} a
 * recording feeds (and {@link org.memtrace.trace.Guarded}, which keeps a failing consumer from ending the
 * recording), the {@link org.memtrace.trace.Naming} a writer names through, and the instruction shapes (size,
 * read, write) that turn a fault into accesses. It must not depend on the recorders, the readers or the
 * analyses (launch, mtr, analysis, cli): they depend on it.
 */
package org.memtrace.trace;
