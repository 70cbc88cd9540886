/**
 * Debian's libzstd through the Foreign Function and Memory API: the library binding, shared by the Parquet
 * export's compressor and the .mtr reader's decompressor, so memtrace ships no compression code of its own. It
 * must not depend on any other memtrace package.
 */
package org.memtrace.compress;
