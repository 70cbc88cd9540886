/**
 * What the program's files say: ELF sections, segments, symbols and build-ids, DWARF line tables and types,
 * separate debug files, and the {@link org.memtrace.symbols.AddressSpace} of loaded modules and mappings that
 * names code and global data. It must depend on nothing but the event records it follows: no recorder, reader,
 * analysis or command.
 */
package org.memtrace.symbols;
