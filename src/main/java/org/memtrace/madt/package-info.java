/**
 * The MadT text trace: one line per event in the paper's format (Table I letters, raw and symbolic addresses,
 * docs/trace-format.md), written as an analysis, and the names of system calls for its comments. It must not
 * depend on how a trace was recorded or read (launch, mtr, cli) nor on the other analyses' packages.
 */
package org.memtrace.madt;
