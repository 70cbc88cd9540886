/**
 * The .mtr file a memtrace cc build writes (docs/compiled-in.md): its chunks and codecs, the site and skeleton
 * tables read from the program's ELF sections, and {@link org.memtrace.mtr.MtrReader}, which turns a file into
 * events in order (skeleton loops replayed into the accesses they compute), with an allocation-free path for
 * access records. It must not depend on the recorders, the analyses or the command line (launch, analysis,
 * cli), nor on the rewriter (instrument), whose output it reads through the formats only.
 */
package org.memtrace.mtr;
