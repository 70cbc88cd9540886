package org.memtrace.symbols;

/**
 * A module where the loader put it: run-time address = ELF virtual address + {@code bias}. {@code base} is
 * its lowest mapped address (page-aligned), the origin of region offsets; {@code end} its highest.
 */
public record LoadedModule(ModuleImage image, long bias, long base, long end) {

    public String name() {
        return image.name();
    }
}
