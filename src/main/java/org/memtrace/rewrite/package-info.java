/**
 * Rewrite mode's planning (docs/rewriting.md): {@link org.memtrace.rewrite.PatchPlanner} decides per memory
 * instruction of a module (a {@link org.memtrace.rewrite.Decision}), {@code TrampolineWriter} and {@code
 * TrampolineLinker} turn the patches into the trampoline file (as + ld), {@link
 * org.memtrace.rewrite.ModuleRewrite} writes the plan the runtime applies and keeps both in the {@link
 * org.memtrace.rewrite.RewriteCache}. It depends on x86, symbols and format (the site table's one encoder)
 * only; running the program is launch's,
 * the command line cli's.
 */
package org.memtrace.rewrite;
