/**
 * The dynamic memory tracker of MadT: live and released heap and mmap blocks with their forged names (Table
 * II, {@code <malloc0013@f+45>}, {@code <freed:...>}), and {@link org.memtrace.heap.SymbolicNaming}, which
 * names a data address by block, global or region. It must not depend on the recorders, the readers or the
 * analyses (launch, mtr, analysis, cli): it follows events and answers names.
 */
package org.memtrace.heap;
