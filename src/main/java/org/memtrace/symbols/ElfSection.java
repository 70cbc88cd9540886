package org.memtrace.symbols;

/** A section header with its resolved name. */
public record ElfSection(String name, int type, long flags, long address, long offset, long size, int link,
                         int info, long entrySize) {

    public static final int SHT_SYMTAB = 2;
    public static final int SHT_RELA = 4;
    public static final int SHT_NOTE = 7;
    public static final int SHT_NOBITS = 8;
    public static final int SHT_DYNSYM = 11;
    /** The section holds an Elf64_Chdr and compressed contents (gcc -gz, distributions' debug files). */
    public static final long SHF_COMPRESSED = 0x800;

    /** Bytes the section occupies in the file: NOBITS sections (.bss, everything in a debug file's loadables) have none. */
    public long fileSize() {
        return type == SHT_NOBITS ? 0 : size;
    }

    public boolean isCompressed() {
        return (flags & SHF_COMPRESSED) != 0;
    }
}
