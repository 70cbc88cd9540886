/**
 * memtrace cc --check's rewriter (docs/check.md): {@link org.memtrace.check.CheckAs} takes the assembly gcc
 * wrote with its AddressSanitizer layout and outline calls, and {@link org.memtrace.check.CheckRewriter}
 * removes the checks static analysis proves redundant (a loop's accesses by one range check at its entry,
 * constant offsets from one base by one check) and turns the rest into inline shadow tests. It uses the
 * rewriter's assembly model (instrument), x86 and symbols; it must not depend on running programs (launch),
 * the commands (cli) nor the reading side (mtr, trace, analysis, madt, report, export).
 */
package org.memtrace.check;
