package org.memtrace.symbols;

/**
 * One entry of .symtab or .dynsym. {@code name} is the plain name: a version suffix that the linker writes
 * into .symtab ({@code stdout@GLIBC_2.2.5}) is cut, so every table spells a symbol the way its source does.
 * The suffix is kept apart in {@code version} ({@code @GLIBC_2.2.5}, {@code @@V2}; empty when there is none)
 * because two versions of one function are two functions to anything that lists them.
 */
public record ElfSymbol(String name, String version, long value, long size, int type, int binding, int sectionIndex) {

    public static final int STT_OBJECT = 1;
    public static final int STT_FUNC = 2;
    /** The source file of the local symbols that follow it in .symtab. */
    public static final int STT_FILE = 4;
    public static final int STT_COMMON = 5;
    public static final int STT_GNU_IFUNC = 10;

    public static final int STB_LOCAL = 0;
    public static final int STB_GLOBAL = 1;
    public static final int STB_WEAK = 2;

    public static final int SHN_UNDEF = 0;

    /** The name as the string table holds it, version suffix included. */
    public String storedName() {
        return name + version;
    }

    public boolean isFunction() {
        return type == STT_FUNC || type == STT_GNU_IFUNC;
    }

    public boolean isObject() {
        return type == STT_OBJECT || type == STT_COMMON;
    }

    /**
     * Defined in a section of this file: undefined and absolute symbols name no address of the module (nor do
     * SHN_XINDEX ones, which only files with more than 65 279 sections have).
     */
    public boolean isDefined() {
        return sectionIndex != SHN_UNDEF && sectionIndex < 0xff00;
    }
}
