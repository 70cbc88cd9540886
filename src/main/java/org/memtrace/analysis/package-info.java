/**
 * The interpretation stage and the analyses' contract: {@link org.memtrace.analysis.Interpretation} turns the
 * events of any recording (faults, probe records, allocations, modules) into numbered, named {@link
 * org.memtrace.analysis.Access}es once, and hands them to every {@link org.memtrace.analysis.Analysis} (the
 * text writer, the summary, the report, the cache simulation, the exports), drcachesim's process_memref and
 * print_results. Also the analyses every command shares: the summary and the cache simulation's bookkeeping.
 * It must not depend on how a trace was recorded or read (launch, mtr, cli) nor on any one analysis's package
 * (madt, report, export): an analysis never needs another to have run.
 */
package org.memtrace.analysis;
