/**
 * The binary sections {@code memtrace cc} writes into a program and the reader takes back (docs/compiled-in.md):
 * {@link org.memtrace.format.SiteFormat} for the site table ({@code memtrace_sites}) and
 * {@link org.memtrace.format.SkeletonFormat} with {@link org.memtrace.format.SkeletonEntries} (each entry of a loop
 * record) and {@link org.memtrace.format.SkeletonParts} for the skeleton
 * section ({@code memtrace_skel}). Each format has one owner here, as drcachesim's {@code trace_entry.h}: its
 * named versions, kinds, sizes, the records both sides share, and each entry's encoder (the assembler
 * directives the rewriter writes) beside its decoder (the reader's), so that writer and reader cannot drift.
 * It depends on no other memtrace package: the writer ({@code instrument}, {@code rewrite}) and the reader
 * ({@code mtr}) both use it, and neither may use the other.
 */
package org.memtrace.format;
