/**
 * The binary event stream between the fault agent and memtrace (docs/event-stream.md): the sealed set of
 * {@link org.memtrace.event.Event} records, their decoder, the shared ring's reader, the saved-stream writer
 * and reader, and the {@link org.memtrace.event.EventSink} every reader hands events to (faults and probe
 * records by their fields, without an object each). It must not depend on any other memtrace package: it is
 * the contract the agent's C code mirrors, and every other package reads events through it.
 */
package org.memtrace.event;
