package org.memtrace.rewrite;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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
    /** The linked result: where the text goes (link-time), its bytes, and each trampoline's address. */
    record Linked(Path file, long textAddress, byte[] text, long cursorSlot, long[] trampolines, byte[] buildId) {}

    private TrampolineLinker() {}

    /** Links {@code patches}' trampolines at link-time address {@code base} into {@code out}, working in {@code work}. */
    static Linked link(List<Decision.Patch> patches, long base, Path work, Path out) throws IOException, RewriteException {
        Path source = work.resolve("trampolines.s"), object = work.resolve("trampolines.o"), script = work.resolve("trampolines.ld");
        Files.writeString(source, TrampolineWriter.assembly(patches), StandardCharsets.US_ASCII);
        Files.writeString(script, "mt_base = 0;\nSECTIONS {\n  . = 0x" + Long.toHexString(base) + ";\n"
                + "  .text : { *(.text) }\n  . = ALIGN(8);\n  memtrace_sites : { KEEP(*(memtrace_sites)) }\n"
                + "  .note.gnu.build-id : { *(.note.gnu.build-id) }\n  /DISCARD/ : { *(.note.GNU-stack) }\n}\n");
        run(work, List.of("as", "--64", "-o", object.toString(), source.toString()));
        run(work, List.of("ld", "-static", "-nostdlib", "--build-id=sha1", "-T", script.toString(), "-o", out.toString(), object.toString()));
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
        return new Linked(out, text.address(), elf.contents(text), slot, at, id);
    }

    private static void run(Path work, List<String> command) throws IOException, RewriteException {
        Path log = work.resolve("tool.log");
        Process p = new ProcessBuilder(command).directory(work.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile()).start();
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
