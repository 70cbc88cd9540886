package org.memtrace.symbols;

/**
 * The source line an instruction was compiled from, as the DWARF line table says: {@code file} as the
 * compiler was given it (relative to the compilation directory, or absolute for a system header; see
 * docs/naming.md), {@code line} counting from 1.
 */
public record SourceLine(String file, int line) {

    /** {@code file:line}, the form compilers and editors print. */
    @Override
    public String toString() {
        return file + ':' + line;
    }
}
