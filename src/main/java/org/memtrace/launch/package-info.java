/**
 * Running a program to record it: the sealed {@link org.memtrace.launch.Recorder} interface with its two ways,
 * {@link org.memtrace.launch.Tracer} (the fault agent preloaded, its ring drained live) and {@link
 * org.memtrace.launch.InstrumentedRun} (a memtrace cc build writing its own .mtr), the target's checks before
 * it starts, the agent's extraction, and the run's result. It must not depend on the analyses or the command
 * line (analysis, madt, report, export, cli): it hands events to one {@link org.memtrace.trace.EventConsumer}
 * and knows nothing of what follows.
 */
package org.memtrace.launch;
