/**
 * memtrace report: the self-contained HTML page about a trace (summary, page and per-object heat maps, hottest
 * objects and instructions, allocation sites, accesses to freed memory), built as an analysis
 * (docs/report.md). It must not depend on how a trace was recorded or read (launch, mtr, cli) nor on the other
 * analyses' packages.
 */
package org.memtrace.report;
