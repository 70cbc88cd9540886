package org.memtrace.rewrite;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.memtrace.symbols.ElfFile;
import org.memtrace.symbols.ElfSection;
import org.memtrace.symbols.ElfSymbol;

/**
 * Assembles and links a module's trampolines with the system's {@code as} and {@code ld} into the
 * <em>trampoline file</em>: an ELF file whose text is the trampolines at their link-time address, with the
 * site table ({@code memtrace_sites}) and a GNU build-id. The reader loads that file's site table at the
 * module's own load bias (the runtime reports it as a module), so its records name the module's
 * instructions. The assembler encodes; nothing here writes machine code by hand.
 */
final class TrampolineLinker {
    /**
     * The linked result: where the text goes (link-time), its bytes, each trampoline's address, and the
     * offsets in the text of every {@code rel32} that reaches the module ({@code fixups}): the runtime adds
     * the text's displacement from its link-time place to them when it maps the text elsewhere.
     */
    record Linked(Path file, long textAddress, byte[] text, long cursorSlot, long[] trampolines, byte[] buildId, int[] fixups) {}

    /** The trampoline file's section that names the module it rewrites, by GNU build-id (the reader's link between the two). */
    static final String REWRITTEN_SECTION = "memtrace_rewritten";
    private static final int R_X86_64_PC32 = 2, R_X86_64_PLT32 = 4;
    /** glibc's tunable (2.35 and later; an older glibc ignores it) that has malloc ask for transparent huge pages. */
    private static final String HUGE_PAGES = "glibc.malloc.hugetlb=1";

    private TrampolineLinker() {}

    /** Links {@code patches}' trampolines at link-time address {@code base} into {@code out}, working in {@code work}. */
    static Linked link(List<Decision.Patch> patches, long base, byte[] moduleId, Path work, Path out) throws IOException, RewriteException {
        return link(patches, Probes.RECORD, SiteWeights.FULL, base, moduleId, work, out);
    }

    /** The same, the trampolines' probes as {@code probes} says, the site table's weights and block fields from {@code weights}. */
    static Linked link(List<Decision.Patch> patches, Probes probes, SiteWeights weights, long base, byte[] moduleId, Path work, Path out)
            throws IOException, RewriteException {
        return link(patches, probes, weights, StackSlots.NONE, base, moduleId, work, out);
    }

    /** The same, the direct accesses to the stack variables {@code slots} names checked against them. */
    static Linked link(List<Decision.Patch> patches, Probes probes, SiteWeights weights, StackSlots slots, long base, byte[] moduleId,
            Path work, Path out) throws IOException, RewriteException {
        return link(patches, probes, weights, slots, DeadRegisters.NONE, base, moduleId, work, out);
    }

    /** The same, recording probes in the registers {@code dead} finds dead where there are enough (no saves). */
    static Linked link(List<Decision.Patch> patches, Probes probes, SiteWeights weights, StackSlots slots, DeadRegisters dead, long base,
            byte[] moduleId, Path work, Path out) throws IOException, RewriteException {
        Path source = work.resolve("trampolines.s"), object = work.resolve("trampolines.o"), script = work.resolve("trampolines.ld");
        var trailer = new StringBuilder("\t.section ").append(REWRITTEN_SECTION).append(",\"\",@progbits\n");
        for (byte b : moduleId) trailer.append("\t.byte ").append(b & 0xff).append('\n');
        // written as it is, not appended to: libc's assembly is 54 MB, which each copy of it (a builder, its
        // string, its encoding) cost the planner's allocation and collections once more
        try (OutputStream file = Files.newOutputStream(source)) {
            file.write(TrampolineWriter.assembly(patches, probes, weights, slots, dead).getBytes(StandardCharsets.US_ASCII));
            file.write(trailer.toString().getBytes(StandardCharsets.US_ASCII));
        }
        Files.writeString(script, "mt_base = 0;\nSECTIONS {\n  . = 0x" + Long.toHexString(base) + ";\n"
                + "  .text : { *(.text) }\n  . = ALIGN(8);\n  memtrace_sites : { KEEP(*(memtrace_sites)) }\n"
                + "  .note.gnu.build-id : { *(.note.gnu.build-id) }\n  " + REWRITTEN_SECTION + " 0 : { KEEP(*(" + REWRITTEN_SECTION + ")) }\n  /DISCARD/ : { *(.note.GNU-stack) }\n}\n");
        run(work, List.of("as", "--64", "-o", object.toString(), source.toString()));
        run(work, List.of("ld", "-static", "-nostdlib", "--build-id=sha1", "--emit-relocs", "-T", script.toString(), "-o", out.toString(), object.toString()));
        ElfFile elf = ElfFile.read(out);
        ElfSection text = elf.section(".text").orElseThrow(() -> new RewriteException("the trampoline file has no .text"));
        Map<String, Long> symbols = new HashMap<>();
        for (ElfSymbol s : elf.symtab()) symbols.put(s.name(), s.value());
        long[] at = new long[patches.size()];
        for (int i = 0; i < at.length; i++) {
            Long v = symbols.get("mt_t" + i);
            if (v == null) throw new RewriteException("the trampoline file lost the label of trampoline " + i);
            at[i] = v;
        }
        Long slot = symbols.get("cursor_slot");
        if (slot == null) throw new RewriteException("the trampoline file lost its cursor slot");
        byte[] id = elf.buildId().orElseThrow(() -> new RewriteException("the trampoline file has no build-id"));
        Linked linked = new Linked(out, text.address(), elf.contents(text), slot, at, id, fixups(elf, text));
        strip(work, out);
        return linked;
    }

    /**
     * The labels and relocations read, the file kept without them: libc's has 241,000 local labels (a
     * trampoline's and a site's each) and 10 MB of relocations, 18 of its 31 MB, which every run's reader
     * indexed as the module's symbols though no record names a trampoline by them. The build-id note stays
     * (the runtime reports it, the reader ties the file to the trace by it). A strip that fails leaves the file
     * whole, which works as before.
     */
    private static void strip(Path work, Path out) throws IOException {
        try {
            run(work, List.of("strip", "--strip-all", out.toString()));
        } catch (RewriteException e) {
            // kept whole, see above
        }
    }

    /**
     * The text offsets of the {@code rel32} fields aimed at the module: the relocations {@code ld
     * --emit-relocs} kept in {@code .rela.text} against {@code mt_base}, the module's link-time origin.
     * Those against the text itself (labels, the cursor slot) move with it and need nothing.
     */
    private static int[] fixups(ElfFile elf, ElfSection text) throws IOException, RewriteException {
        ElfSection rela = elf.section(".rela.text").orElse(null);
        if (rela == null) return new int[0];
        if (rela.link() <= 0 || rela.link() >= elf.sections().size()) throw new RewriteException("the trampoline file's relocations have no symbol table");
        ElfSection symtab = elf.sections().get(rela.link());
        ElfSection strtab = elf.sections().get(symtab.link());
        ByteBuffer r = ByteBuffer.wrap(elf.contents(rela)).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer sym = ByteBuffer.wrap(elf.contents(symtab)).order(ByteOrder.LITTLE_ENDIAN);
        byte[] names = elf.contents(strtab);
        List<Integer> out = new ArrayList<>();
        for (int at = 0; at + 24 <= r.limit(); at += 24) {
            long offset = r.getLong(at), info = r.getLong(at + 8);
            int type = (int) info, index = (int) (info >>> 32);
            if (index == 0 || 24L * index + 24 > sym.limit()) continue;
            int name = sym.getInt(24 * index);
            if (!"mt_base".equals(cString(names, name))) continue;
            if (type != R_X86_64_PC32 && type != R_X86_64_PLT32)
                throw new RewriteException("the trampolines reach the module by a relocation of type " + type + ", not a rel32");
            out.add((int) (offset - text.address()));
        }
        return out.stream().mapToInt(Integer::intValue).toArray();
    }

    private static String cString(byte[] b, int from) {
        if (from < 0 || from >= b.length) return "";
        int end = from;
        while (end < b.length && b[end] != 0) end++;
        return new String(b, from, end - from, StandardCharsets.US_ASCII);
    }

    private static void run(Path work, List<String> command) throws IOException, RewriteException {
        Path log = work.resolve("tool.log");
        ProcessBuilder builder = new ProcessBuilder(command).directory(work.toFile()).redirectErrorStream(true).redirectOutput(log.toFile());
        // malloc in transparent huge pages: as and ld allocate some 300 MB for libc's trampolines, and
        // faulting them in 4 KB pages cost a third of their CPU (their output is the same byte for byte)
        String tunables = builder.environment().get("GLIBC_TUNABLES");
        builder.environment().put("GLIBC_TUNABLES", (tunables == null || tunables.isEmpty() ? "" : tunables + ":") + HUGE_PAGES);
        Process p = builder.start();
        int status;
        try {
            status = p.waitFor();
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new RewriteException(command.getFirst() + " was interrupted");
        }
        if (status != 0) {
            String first = Files.readAllLines(log).stream().findFirst().orElse("no message");
            throw new RewriteException(command.getFirst() + " failed on the trampolines (status " + status + "): " + first);
        }
    }
}
