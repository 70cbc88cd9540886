/**
 * memtrace convert's formats: Valgrind Lackey, Pin's pinatrace, Dinero's din, CSV and Parquet, each an
 * analysis that writes one row or line per access (grammar in docs/convert.md). It must not depend on how a
 * trace was recorded or read (launch, mtr, cli) nor on the other analyses' packages.
 */
package org.memtrace.export;
