/**
 * memtrace analyze, the static side of selective instrumentation (paper 001): basic blocks, BID expressions,
 * stability, equivalence classes, distances, the knapsack selection and its MA/AIA accuracy, over an ELF
 * file's code. It must not depend on the dynamic side (launch, mtr, trace, analysis) nor on the rewriter:
 * instrument uses its selection, not the reverse.
 */
package org.memtrace.select;
