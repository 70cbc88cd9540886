/**
 * memtrace cc: the assembly rewriter that inserts probes before the memory instructions gcc emitted (all of
 * them, or those select chose), writes the site table, the option words and, with --skeleton, the loop
 * skeletons; and the as step the gcc wrapper runs in place of the assembler. It must not depend on the dynamic
 * side (launch, mtr, trace, analysis): what it writes is read back by the mtr package through the formats
 * alone.
 */
package org.memtrace.instrument;
